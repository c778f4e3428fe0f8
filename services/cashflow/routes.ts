import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The cashflow service's HTTP controller. */
export function createCashflowApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Cashflow' })
}
