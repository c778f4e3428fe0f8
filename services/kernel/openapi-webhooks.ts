import { t } from 'elysia'
import {
  BalanceLowEvent,
  PaymentFailedEvent,
  StatementProcessedEvent,
  SubscriptionChangedEvent,
} from '../../schema/events.ts'
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../schema/vocabulary.ts'
import { exampleOf } from './openapi-examples.ts'
import { normalizeSchema } from './openapi-schema.ts'

const Nullable = <S extends Parameters<typeof t.Nullable>[0]>(s: S) => t.Nullable(s)

/**
 * The `data` of each webhook event, as the webhook service maps broker events to it
 * (services/webhook/sources.ts; test/openapi-webhooks.test.ts holds the two together).
 */
export const webhookData: Record<WebhookEvent, unknown> = {
  'payment.success': t.Object(
    {
      transaction_id: t.String(),
      amount: t.Number({ description: 'shillings' }),
      phone_number: Nullable(t.String()),
      checkout_request_id: t.Optional(t.String()),
      receipt_number: Nullable(t.String()),
      account_reference: t.Optional(t.String()),
      purpose: t.Optional(t.Literal('invoice')),
      channel: t.Optional(
        t.Union([t.Literal('stk'), t.Literal('b2c'), t.Literal('c2b'), t.Literal('reversal')]),
      ),
      counterparty_name: t.Optional(t.String()),
      occurred_at: t.String({ format: 'date-time' }),
    },
    { additionalProperties: false },
  ),
  'payment.failed': t.Object(PaymentFailedEvent.properties, { additionalProperties: false }),
  'transaction.categorized': t.Object(
    {
      transaction_id: t.String(),
      occurred_at: t.String({ format: 'date-time' }),
      amount: t.Number(),
      direction: t.Union([t.Literal('in'), t.Literal('out')]),
      description: t.String(),
      counterparty_name: Nullable(t.String()),
      counterparty_phone: Nullable(t.String()),
      receipt_number: Nullable(t.String()),
      category: Nullable(t.String()),
      category_confidence: Nullable(t.Number()),
      category_source: Nullable(t.String()),
      rule_id: Nullable(t.String()),
    },
    { additionalProperties: false },
  ),
  'subscription.renewed': SubscriptionChangedEvent,
  'statement.processed': StatementProcessedEvent,
  'low.balance.alert': BalanceLowEvent,
}

/** The body every endpoint receives (Standard Webhooks, signed; DESIGN §9). */
export function webhookPayloadSchema(event: WebhookEvent): Record<string, unknown> {
  return normalizeSchema(
    t.Object(
      {
        id: t.String({ description: 'the message id (also the webhook-id header)' }),
        event: t.Literal(event),
        version: t.Integer({ minimum: 1, description: "the endpoint's pinned payload version" }),
        timestamp: t.String({ format: 'date-time' }),
        data: webhookData[event] as ReturnType<typeof t.Object>,
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
 * and an example; any 2xx is success, anything else is retried on the endpoint's schedule.
 */
export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENTS.map((event) => {
      const schema = webhookPayloadSchema(event)
      return [
        event,
        {
          post: {
            operationId: `webhook_${event.replaceAll('.', '_')}`,
            summary: `${event}: sent to every enabled endpoint subscribed to it`,
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
