import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { invalidField } from '../kernel/errors.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { getDelivery, listDeliveries, replayDead, replayDelivery } from './delivery-log.ts'
import type { WebhookDeps } from './deps.ts'
import {
  createEndpoint,
  deleteEndpoint,
  endpointUsage,
  endpointView,
  getEndpointRow,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from './endpoints.ts'
import { EventTypeList, listEventTypes } from './event-types.ts'
import {
  CreatedEndpoint,
  CreateEndpointBody,
  Delivery,
  DeliveryQuery,
  Endpoint,
  isWebhookEvent,
  ReplayManyBody,
  RotatedSecret,
  RotateSecretBody,
  TriggerBody,
  UpdateEndpointBody,
  webhookEvents,
} from './model.ts'
import { enqueueEvent } from './queue.ts'

const secured = (summary: string) => ({
  summary,
  tags: ['webhooks'],
  security: [{ bearer: [] }],
})

/** Tenant a lookup is limited to: the actor's own, or any (null) for the platform operator. */
const scopeOf = (actor: Actor, named?: string): string | null =>
  isOperator(actor) && !named ? null : tenantFor(actor, named)

const IdParams = t.Object({ id: t.String() })
const Page = <T extends Parameters<typeof t.Array>[0]>(item: T) =>
  t.Object({ data: t.Array(item), next_cursor: t.Nullable(t.String()), has_more: t.Boolean() })

/** The webhook service's HTTP controller (DESIGN §9, §11). */
export function createWebhooksApp(ctx: ServiceContext, deps: WebhookDeps) {
  return createServiceApp(ctx, {
    title: 'Webhooks',
    description: 'Signed, retried delivery of platform events to tenant endpoints',
  })
    .post(
      '/api/v1/webhooks',
      async ({ body, actor, set }) => {
        const tenantId = tenantFor(actor, body.tenant_id)
        set.status = 201
        return createEndpoint(deps, tenantId, body)
      },
      {
        auth: 'admin',
        idempotent: true,
        body: CreateEndpointBody,
        response: { 201: CreatedEndpoint },
        detail: secured('Register a webhook endpoint for a tenant'),
      },
    )
    .get(
      '/api/v1/webhooks',
      ({ query, actor }) => listEndpoints(deps, scopeOf(actor, query.tenant_id), query),
      {
        auth: 'admin',
        query: t.Object({
          tenant_id: t.Optional(t.String()),
          limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1 })),
          cursor: t.Optional(t.String()),
        }),
        response: { 200: Page(Endpoint) },
        detail: secured("List a tenant's webhook endpoints"),
      },
    )
    .get(
      '/api/v1/webhooks/usage',
      ({ query, actor }) => endpointUsage(deps, tenantFor(actor, query.tenant_id)),
      {
        auth: 'read',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: {
          200: t.Object({
            tenant_id: t.String(),
            webhook_endpoints: t.Object({ used: t.Integer(), limit: t.Nullable(t.Integer()) }),
          }),
        },
        detail: secured('Webhook endpoints used against the plan limit'),
      },
    )
    .get('/api/v1/webhooks/event-types', () => listEventTypes(), {
      auth: 'read',
      response: { 200: EventTypeList },
      detail: secured(
        'The webhook event catalogue: each event with its description, version and the JSON Schema of its data',
      ),
    })
    .post(
      '/api/v1/webhooks/trigger',
      ({ body, actor, set }) => {
        const tenantId = tenantFor(actor, body.tenant_id)
        if (!isWebhookEvent(body.event))
          throw invalidField('event', `must be one of: ${webhookEvents.join(', ')}`)
        const r = enqueueEvent(deps, tenantId, body.event, body.data ?? {}, undefined, true)
        deps.notify.enqueued(r.endpoints)
        set.status = 202
        return { message_id: r.messageId, deliveries: r.deliveries }
      },
      {
        auth: 'admin',
        idempotent: true,
        body: TriggerBody,
        response: {
          202: t.Object({ message_id: t.String(), deliveries: t.Array(t.String()) }),
        },
        detail: secured("Send an event to the tenant's subscribed endpoints (for testing)"),
      },
    )
    .get(
      '/api/v1/webhooks/deliveries',
      ({ query, actor }) => listDeliveries(deps, scopeOf(actor, query.tenant_id), query),
      {
        auth: 'admin',
        query: DeliveryQuery,
        response: { 200: Page(Delivery) },
        detail: secured('Delivery log with every attempt, filtered by status, endpoint, event'),
      },
    )
    .post(
      '/api/v1/webhooks/deliveries/replay',
      ({ body, actor, set }) => {
        set.status = 202
        return replayDead(deps, scopeOf(actor, body?.tenant_id), body?.endpoint_id)
      },
      {
        auth: 'admin',
        idempotent: true,
        body: t.Optional(ReplayManyBody),
        response: { 202: t.Object({ replayed: t.Integer() }) },
        detail: secured('Replay every dead delivery (of a tenant, or of one endpoint)'),
      },
    )
    .get(
      '/api/v1/webhooks/deliveries/:id',
      ({ params, actor }) => getDelivery(deps, scopeOf(actor), params.id),
      {
        auth: 'admin',
        params: IdParams,
        response: { 200: Delivery },
        detail: secured('One delivery with its attempts'),
      },
    )
    .post(
      '/api/v1/webhooks/deliveries/:id/replay',
      ({ params, actor, set }) => {
        set.status = 202
        return replayDelivery(deps, scopeOf(actor), params.id)
      },
      {
        auth: 'admin',
        idempotent: true,
        params: IdParams,
        response: { 202: Delivery },
        detail: secured('Send a delivered or dead delivery again'),
      },
    )
    .get(
      '/api/v1/webhooks/:id',
      ({ params, actor }) => endpointView(getEndpointRow(deps, scopeOf(actor), params.id)),
      {
        auth: 'admin',
        params: IdParams,
        response: { 200: Endpoint },
        detail: secured('One webhook endpoint'),
      },
    )
    .patch(
      '/api/v1/webhooks/:id',
      ({ params, actor, body }) => updateEndpoint(deps, scopeOf(actor), params.id, body),
      {
        auth: 'admin',
        params: IdParams,
        body: UpdateEndpointBody,
        response: { 200: Endpoint },
        detail: secured('Change url, events, status (enabled|disabled), version or rate limit'),
      },
    )
    .delete(
      '/api/v1/webhooks/:id',
      ({ params, actor, set }) => {
        deleteEndpoint(deps, scopeOf(actor), params.id)
        set.status = 204
      },
      {
        auth: 'admin',
        params: IdParams,
        detail: secured('Delete a webhook endpoint; its queued deliveries end dead'),
      },
    )
    .post(
      '/api/v1/webhooks/:id/rotate-secret',
      ({ params, actor, body }) => rotateSecret(deps, scopeOf(actor), params.id, body?.secret),
      {
        auth: 'admin',
        params: IdParams,
        body: t.Optional(RotateSecretBody),
        response: { 200: RotatedSecret },
        detail: secured('Replace the signing secret; the old one also signs for 24 hours'),
      },
    )
}
