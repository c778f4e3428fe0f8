import { and, eq } from 'drizzle-orm'
import { type TopicEvent, topics } from '../../schema/events.ts'
import { webhookDeliveries, webhookEndpoints } from '../../schema/webhook/tables.ts'
import {
  type AnyWebhookEventEntry,
  type WebhookSource,
  webhookEventNames,
  webhookEventRegistry,
  webhookSourceTopics,
} from '../../schema/webhook-events.ts'
import type { EventBus } from '../kernel/bus.ts'
import { handleOnce } from '../kernel/events.ts'
import { subscribe } from '../kernel/subscribe.ts'
import type { TenantOwnership } from '../kernel/tenant-owner.ts'
import type { WebhookDeps } from './deps.ts'
import { type EventToQueue, enqueueEvents } from './queue.ts'

/** The registry's entries that come from `topic`, each with its name. */
const entriesOf = (topic: WebhookSource) =>
  webhookEventNames
    .map((event) => ({ event, entry: webhookEventRegistry[event] as AnyWebhookEventEntry }))
    .filter(({ entry }) => entry.source === topic)

/**
 * What one broker event becomes for webhook receivers: the deliveries of every event the registry
 * (schema/webhook-events.ts) makes of its topic, each keyed by the fact it names or else by the
 * broker event (the same outbox row, replayed, brings the same id).
 */
export function mapSourceEvent(
  topic: WebhookSource,
  event: { id: string; data: unknown },
): EventToQueue[] {
  const out: EventToQueue[] = []
  for (const { event: name, entry } of entriesOf(topic))
    for (const d of entry.from(event.data as never))
      out.push({ event: name, data: d.data as Record<string, unknown>, key: d.key })
  return out.map((m, i) => ({ ...m, key: m.key ?? `${event.id}#${i}` }))
}

const CONSUMER = 'webhook'

/**
 * Turns one broker event into deliveries for the event's tenant only, exactly once per event id
 * (inbox row and deliveries commit together).
 */
export function consumeEvent<T extends WebhookSource>(
  deps: WebhookDeps,
  topic: T,
  event: TopicEvent<T>,
): string[] {
  let touched: string[] = []
  const mapped = mapSourceEvent(topic, event)
  handleOnce(deps.db, CONSUMER, event.id, () => {
    touched = enqueueEvents(deps, {
      tenantId: event.tenant_id,
      events: mapped,
      occurredAt: event.occurred_at,
    }).endpoints
  })
  return touched
}

/** A deleted tenant's endpoints go away with their queued deliveries. */
function removeTenant(
  deps: WebhookDeps,
  event: TopicEvent<typeof topics.tenantsChanged>,
): string[] {
  if (event.data.change !== 'deleted') return []
  const ids: string[] = []
  handleOnce(deps.db, CONSUMER, event.id, () => {
    const removed = deps.db.orm
      .delete(webhookEndpoints)
      .where(eq(webhookEndpoints.tenantId, event.tenant_id))
      .returning({ id: webhookEndpoints.id })
      .all()
    for (const r of removed) ids.push(r.id)
    deps.db.orm
      .update(webhookDeliveries)
      .set({
        status: 'dead',
        lastError: 'tenant deleted',
        updatedAt: deps.clock.now().toISOString(),
      })
      .where(
        and(
          eq(webhookDeliveries.tenantId, event.tenant_id),
          eq(webhookDeliveries.status, 'pending'),
        ),
      )
      .run()
  })
  return ids
}

export async function subscribeSources(
  bus: EventBus,
  deps: WebhookDeps,
  ownership?: TenantOwnership,
): Promise<void> {
  const on = { bus, log: deps.log, ownership }
  // Each topic a webhook event comes from (scripts/architecture-doc.ts reads this loop as
  // subscriptions to `webhookSourceTopics`, held to schema/topic-registry.ts).
  for (const topic of webhookSourceTopics) {
    await subscribe(on, CONSUMER, topic, (event) => {
      const touched = consumeEvent(deps, topic, event)
      if (touched.length) deps.notify.enqueued(touched)
    })
  }
  await subscribe(on, CONSUMER, topics.tenantsChanged, (event) => {
    for (const id of removeTenant(deps, event)) deps.notify.endpointChanged(id)
  })
}
