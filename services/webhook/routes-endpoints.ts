import { t } from 'elysia'
import { created, createRoute } from '../kernel/create-route.ts'
import { listOf } from '../kernel/lists.ts'
import { tenantFor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import type { WebhookDeps } from './deps.ts'
import { rotateSecret } from './endpoint-secrets.ts'
import {
  createEndpoint,
  deleteEndpoint,
  endpointUsage,
  endpointView,
  getEndpointRow,
  listEndpoints,
  updateEndpoint,
} from './endpoints.ts'
import {
  CreatedEndpoint,
  CreateEndpointBody,
  Endpoint,
  RotatedSecret,
  RotateSecretBody,
  UpdateEndpointBody,
} from './model.ts'
import { IdParams, scopeOf, secured } from './route-kit.ts'

/** A tenant's webhook endpoints: register, list, count against the plan, read, change, delete, rotate. */
export function endpointRoutes({ app, deps }: { app: ServiceApp; deps: WebhookDeps }) {
  return app
    .post(
      '/api/v1/webhooks',
      async ({ body, actor, set }) =>
        created(set, await createEndpoint(deps, tenantFor(actor, body.tenant_id), body)),
      createRoute({
        body: CreateEndpointBody,
        created: CreatedEndpoint,
        detail: secured('Register a webhook endpoint for a tenant'),
      }),
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
        response: { 200: listOf(Endpoint) },
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
}

/** One endpoint by id (registered after the fixed `/api/v1/webhooks/...` paths). */
export function endpointByIdRoutes({ app, deps }: { app: ServiceApp; deps: WebhookDeps }) {
  return app
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
