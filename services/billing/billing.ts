import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import type { BillingSettings } from './settings.ts'

/** Where daemon/slices.ts still reads the slice type from. */
export type { BillingSettings } from './settings.ts'

/** What every billing verb works with: the platform database and the service's settings. */
export interface Billing {
  ctx: ServiceContext
  db: Db
  /** Days an unpaid invoice may stay past due before the subscription is suspended. */
  graceDays: number
  /** Days from issue to due date of an invoice. */
  dueDays: number
}

export function createBilling(ctx: ServiceContext<BillingSettings>): Billing {
  return {
    ctx,
    db: ctx.registry.platform('billing'),
    graceDays: ctx.settings.graceDays,
    dueDays: ctx.settings.dueDays,
  }
}

export const DAY_MS = 86_400_000
export const iso = (d: Date) => d.toISOString()
