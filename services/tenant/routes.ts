import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The tenant service's HTTP controller. */
export function createTenantsApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Tenants' })
}
