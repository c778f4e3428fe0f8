import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { invalidField } from '../kernel/errors.ts'
import { listOf } from '../kernel/lists.ts'
import { tenantFor } from '../kernel/roles.ts'
import { createServiceApp, type ServiceApp } from '../kernel/service.ts'
import { getDelivery, listDeliveries, replayDead, replayDelivery } from './delivery-log.ts'
import type { WebhookDeps } from './deps.ts'
import { EventTypeList, listEventTypes } from './event-types.ts'
import {
  Delivery,
  DeliveryQuery,
  isWebhookEvent,
  ReplayManyBody,
  TriggerBody,
  webhookEvents,
} from './model.ts'
import { enqueueEvent } from './queue.ts'
import { IdParams, scopeOf, secured } from './route-kit.ts'
import { endpointByIdRoutes, endpointRoutes } from './routes-endpoints.ts'

/** The webhook service's HTTP controller (DESIGN §9, §11). */
export function createWebhooksApp(ctx: ServiceContext, deps: WebhookDeps) {
  const app = createServiceApp(ctx, {
    title: 'Webhooks',
    description: 'Signed, retried delivery of platform events to tenant endpoints',
  })
  // The fixed paths under /api/v1/webhooks come before `/api/v1/webhooks/:id`.
  endpointRoutes({ app, deps })
  eventRoutes({ app, deps })
  deliveryRoutes({ app, deps })
  endpointByIdRoutes({ app, deps })
  return app
}

/** The event catalogue and a test trigger. */
function eventRoutes({ app, deps }: { app: ServiceApp; deps: WebhookDeps }) {
  return app
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
        const r = enqueueEvent(deps, {
          tenantId,
          event: body.event,
          data: body.data ?? {},
          test: true,
        })
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
}

/** The delivery log: list, read one, replay one or every dead one. */
function deliveryRoutes({ app, deps }: { app: ServiceApp; deps: WebhookDeps }) {
  return app
    .get(
      '/api/v1/webhooks/deliveries',
      ({ query, actor }) => listDeliveries(deps, scopeOf(actor, query.tenant_id), query),
      {
        auth: 'admin',
        query: DeliveryQuery,
        response: { 200: listOf(Delivery) },
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
}
