import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'

/** What every billing verb works with: the platform database and the service's settings. */
export interface Billing {
  ctx: ServiceContext
  db: Db
  /** Days an unpaid invoice may stay past due before the subscription is suspended. */
  graceDays: number
  /** Days from issue to due date of an invoice. */
  dueDays: number
}

export function createBilling(ctx: ServiceContext): Billing {
  const s = ctx.settings as Record<string, unknown>
  return {
    ctx,
    db: ctx.registry.platform('billing'),
    graceDays: Number(s['billing.grace_days'] ?? 7),
    dueDays: Number(s['billing.due_days'] ?? 7),
  }
}

export const DAY_MS = 86_400_000
export const iso = (d: Date) => d.toISOString()
