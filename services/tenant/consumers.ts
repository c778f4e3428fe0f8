import { topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { applySubscriptionChange } from './upgrade.ts'

/**
 * Subscribes the tenant service to its input (DESIGN §10: the tier follows the subscription):
 * the plan billing reports is applied, its data moved with it (services/tenant/upgrade.ts).
 */
export async function subscribeTenant(ctx: ServiceContext): Promise<void> {
  await subscribe(ctx, 'tenant', topics.subscriptionsChanged, (event) =>
    applySubscriptionChange(ctx, event),
  )
}
