import { t } from 'elysia'
import { type WebhookEventRegistry, webhookEventRegistry } from '../../schema/webhook-events.ts'
import { exampleOf } from './openapi-examples.ts'
import { normalizeSchema } from './openapi-schema.ts'

/** The body every endpoint receives (Standard Webhooks, signed; DESIGN §9). */
export function webhookPayloadSchema(
  event: string,
  reg: WebhookEventRegistry = webhookEventRegistry,
): Record<string, unknown> {
  const entry = reg[event]
  if (!entry) throw new Error(`no webhook event ${event} in schema/webhook-events.ts`)
  return normalizeSchema(
    t.Object(
      {
        id: t.String({ description: 'the message id (also the webhook-id header)' }),
        event: t.Literal(event),
        version: t.Integer({ minimum: 1, description: "the endpoint's pinned payload version" }),
        timestamp: t.String({ format: 'date-time' }),
        data: entry.data,
      },
      { additionalProperties: false },
    ),
  ) as Record<string, unknown>
}

const signatureHeaders = [
  ['webhook-id', 'The message id; the same on every retry (deduplicate by it)'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed'],
  ['webhook-signature', 'v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">, space-separated'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}))

/**
 * OpenAPI 3.1 `webhooks`: one POST per event to the tenant's endpoint, with its payload schema
 * and an example, for each event of schema/webhook-events.ts; any 2xx is success, anything else
 * is retried on the endpoint's schedule.
 */
export function webhooksSection(
  reg: WebhookEventRegistry = webhookEventRegistry,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(reg).map((event) => {
      const schema = webhookPayloadSchema(event, reg)
      return [
        event,
        {
          post: {
            operationId: `webhook_${event.replaceAll('.', '_')}`,
            summary: `${event}: sent to every enabled endpoint subscribed to it`,
            description: reg[event]?.description,
            tags: ['webhooks'],
            security: [],
            parameters: signatureHeaders,
            requestBody: {
              required: true,
              content: { 'application/json': { schema, example: exampleOf(schema) } },
            },
            responses: {
              '2XX': { description: 'Delivered' },
              default: { description: 'Retried on the retry schedule, then dead' },
            },
          },
        },
      ]
    }),
  )
}
