import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'

/** The webhook service's HTTP controller. */
export function createWebhooksApp(ctx: ServiceContext) {
  return createServiceApp(ctx, { title: 'Webhooks' })
}
