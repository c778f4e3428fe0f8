import { t } from 'elysia'
import type { WebhookEvent } from '../../schema/vocabulary.ts'
import { webhookEventNames } from '../../schema/webhook-events.ts'

/** The webhook events an endpoint may subscribe to (schema/webhook-events.ts). */
export const webhookEvents: readonly WebhookEvent[] = webhookEventNames
export type { WebhookEvent }

/** Payload versions an endpoint may pin (only v1 exists so far). */
export const payloadVersions = [1] as const

export const isWebhookEvent = (x: string): x is WebhookEvent =>
  (webhookEvents as readonly string[]).includes(x)

export const deliveryStatuses = ['pending', 'delivering', 'delivered', 'dead'] as const
export type DeliveryStatus = (typeof deliveryStatuses)[number]

const Secret = t.String({ minLength: 1, maxLength: 512 })

export const CreateEndpointBody = t.Object({
  tenant_id: t.Optional(t.String()),
  url: t.String({ minLength: 1, maxLength: 2048 }),
  events: t.Array(t.String(), { minItems: 1, maxItems: 20 }),
  /** Omitted: one is generated and returned once, in the 201 answer. */
  secret: t.Optional(Secret),
  version: t.Optional(t.Integer({ minimum: 1 })),
  rate_limit: t.Optional(t.Nullable(t.Integer({ minimum: 1, maximum: 100000 }))),
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
})
export type CreateEndpointBody = typeof CreateEndpointBody.static

export const UpdateEndpointBody = t.Object({
  url: t.Optional(t.String({ minLength: 1, maxLength: 2048 })),
  events: t.Optional(t.Array(t.String(), { minItems: 1, maxItems: 20 })),
  status: t.Optional(t.Union([t.Literal('enabled'), t.Literal('disabled')])),
  version: t.Optional(t.Integer({ minimum: 1 })),
  rate_limit: t.Optional(t.Nullable(t.Integer({ minimum: 1, maximum: 100000 }))),
  description: t.Optional(t.Nullable(t.String({ maxLength: 500 }))),
})
export type UpdateEndpointBody = typeof UpdateEndpointBody.static

export const Endpoint = t.Object(
  {
    id: t.String(),
    tenant_id: t.String(),
    url: t.String(),
    events: t.Array(t.String()),
    status: t.Union([t.Literal('enabled'), t.Literal('disabled')]),
    version: t.Integer(),
    rate_limit: t.Nullable(t.Integer()),
    description: t.Nullable(t.String()),
    disabled_reason: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'WebhookEndpoint' },
)
export type Endpoint = typeof Endpoint.static

export const CreatedEndpoint = t.Object({
  ...Endpoint.properties,
  /** Present only when the service generated the secret: shown this once, stored encrypted. */
  secret: t.Optional(t.String()),
})

export const RotateSecretBody = t.Object({ secret: t.Optional(Secret) })
export const RotatedSecret = t.Object({
  ...Endpoint.properties,
  /** Present only when the service generated the new secret. */
  secret: t.Optional(t.String()),
  previous_secret_expires_at: t.String(),
})

export const TriggerBody = t.Object({
  tenant_id: t.Optional(t.String()),
  event: t.String(),
  data: t.Optional(t.Record(t.String(), t.Unknown())),
})

export const Attempt = t.Object({
  at: t.String(),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  response_excerpt: t.Nullable(t.String()),
  error: t.Nullable(t.String()),
})

export const Delivery = t.Object(
  {
    id: t.String(),
    tenant_id: t.String(),
    endpoint_id: t.String(),
    message_id: t.String(),
    event: t.String(),
    status: t.String(),
    attempt_count: t.Integer(),
    next_attempt_at: t.Nullable(t.String()),
    last_attempt_at: t.Nullable(t.String()),
    last_status_code: t.Nullable(t.Integer()),
    last_error: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
    delivered_at: t.Nullable(t.String()),
    payload: t.Unknown(),
    attempts: t.Array(Attempt),
  },
  { title: 'Delivery' },
)
export type Delivery = typeof Delivery.static

export const DeliveryQuery = t.Object({
  tenant_id: t.Optional(t.String()),
  status: t.Optional(t.String()),
  endpoint_id: t.Optional(t.String()),
  event: t.Optional(t.String()),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1 })),
  cursor: t.Optional(t.String()),
})

export const ReplayManyBody = t.Object({
  tenant_id: t.Optional(t.String()),
  endpoint_id: t.Optional(t.String()),
  status: t.Optional(t.Literal('dead')),
})
