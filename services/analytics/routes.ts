import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The analytics service's HTTP controller. */
export function createAnalyticsApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Analytics' })
}
