import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The billing service's HTTP controller. */
export function createBillingApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Billing' })
}
