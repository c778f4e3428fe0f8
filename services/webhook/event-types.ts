import { t } from 'elysia'
import { type WebhookEventRegistry, webhookEventRegistry } from '../../schema/webhook-events.ts'

/**
 * The webhook event catalogue (Svix's event types), served at GET /api/v1/webhooks/event-types so
 * a receiver can generate types or validate what arrives: each event of schema/webhook-events.ts
 * with what it means, its version and the JSON Schema of its `data` (TypeBox's symbols dropped).
 *
 * @example
 * listEventTypes().data.map((e) => e.name) // ['payment.success', ...]
 */
export function listEventTypes(reg: WebhookEventRegistry = webhookEventRegistry) {
  return {
    data: Object.entries(reg).map(([name, e]) => ({
      name,
      description: e.description,
      version: e.version,
      schema: JSON.parse(JSON.stringify(e.data)) as Record<string, unknown>,
    })),
  }
}

export const EventTypeList = t.Object({
  data: t.Array(
    t.Object({
      name: t.String(),
      description: t.String(),
      version: t.Integer(),
      schema: t.Record(t.String(), t.Unknown(), { description: 'JSON Schema of `data`' }),
    }),
  ),
})
