import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The payment service's HTTP controller. */
export function createPaymentsApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Payments' })
}
