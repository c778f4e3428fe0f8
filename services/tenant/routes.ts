import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { created, createRoute } from '../kernel/create-route.ts'
import { wholeList } from '../kernel/lists.ts'
import type { Actor } from '../kernel/roles.ts'
import { createServiceApp, type ServiceApp } from '../kernel/service.ts'
import { createJobs } from './jobs.ts'
import {
  CreatedTenant,
  CreateTenantBody,
  FeatureState,
  Tenant,
  TenantList,
  UpdateTenantBody,
  type UpdateTenantInput,
} from './model.ts'
import { backupRoutes } from './routes-backups.ts'
import { callOf, secured } from './routes-common.ts'
import { moveRoutes } from './routes-moves.ts'
import { userRoutes } from './routes-users.ts'
import {
  createTenant,
  deleteTenant,
  featureState,
  listTenants,
  setFeatures,
  setStatus,
  tenantView,
  updateTenant,
} from './service.ts'
import type { TenantSettings } from './settings.ts'
import { tenantInPath } from './store.ts'

type UpdateArgs = { params: { tenant_id: string }; actor: Actor; body: UpdateTenantInput }

/** The tenant service's HTTP controller (DESIGN §10–11). */
export function createTenantsApp(ctx: ServiceContext, settings: TenantSettings = {}) {
  const app = createServiceApp(ctx, {
    title: 'Tenants',
    description: 'Tenants, their users, plans, isolation tiers and feature flags',
  })
  tenantRoutes({ app, ctx })
  const jobs = createJobs(ctx.registry.dataDir)
  moveRoutes({ app, ctx, jobs })
  backupRoutes({ app, ctx, jobs, backup: settings.backup })
  userRoutes({ app, ctx })
  return app
}

/** Fresh for each route: Elysia takes its macro keys out of the object it is given. */
const updateOptions = () =>
  ({
    auth: 'admin',
    body: UpdateTenantBody,
    response: { 200: Tenant },
    detail: secured('Update name, time zone or settings'),
  }) as const

/** Tenants themselves: create, list, read, update, erase, suspend, resume, feature flags. */
function tenantRoutes({ app, ctx }: { app: ServiceApp; ctx: ServiceContext }) {
  const update = ({ params, actor, body }: UpdateArgs) =>
    updateTenant(ctx, actor, params.tenant_id, body)
  return app
    .post(
      '/api/v1/tenants',
      async ({ body, actor, requestId, request, set }) =>
        created(set, await createTenant(ctx, callOf(actor, requestId, request), body)),
      createRoute({
        auth: 'operator',
        body: CreateTenantBody,
        created: CreatedTenant,
        detail: secured('Create a tenant and invite its first Admin (operator)'),
      }),
    )
    .get('/api/v1/tenants', () => wholeList(listTenants(ctx)), {
      auth: 'operator',
      response: { 200: TenantList },
      detail: secured('List every tenant (operator)'),
    })
    .get(
      '/api/v1/tenants/:tenant_id',
      ({ params, actor }) => tenantView(ctx, actor, params.tenant_id),
      {
        auth: 'read',
        response: { 200: Tenant },
        detail: secured('Get a tenant'),
      },
    )
    .patch('/api/v1/tenants/:tenant_id', update, updateOptions())
    .put('/api/v1/tenants/:tenant_id', update, updateOptions())
    .delete(
      '/api/v1/tenants/:tenant_id',
      ({ params, query, actor, requestId, request }) =>
        deleteTenant(ctx, callOf(actor, requestId, request), params.tenant_id, query.confirm),
      {
        auth: 'operator',
        query: t.Object({ confirm: t.Optional(t.String()) }),
        response: {
          200: t.Object(
            {
              id: t.String(),
              deleted: t.Literal(true),
              users_removed: t.Integer(),
              rows_erased: t.Integer(),
            },
            { title: 'TenantErased' },
          ),
        },
        detail: secured('Erase a tenant, its data and its users; ?confirm=<id> (operator)'),
      },
    )
    .post(
      '/api/v1/tenants/:tenant_id/suspend',
      ({ params }) => setStatus(ctx, params.tenant_id, 'suspended'),
      {
        auth: 'operator',
        response: { 200: Tenant },
        detail: secured('Suspend a tenant (operator)'),
      },
    )
    .post(
      '/api/v1/tenants/:tenant_id/resume',
      ({ params }) => setStatus(ctx, params.tenant_id, 'active'),
      {
        auth: 'operator',
        response: { 200: Tenant },
        detail: secured('Resume a suspended tenant (operator)'),
      },
    )
    .get(
      '/api/v1/tenants/:tenant_id/features',
      ({ params, actor }) => featureState(tenantInPath(ctx, actor, params.tenant_id)),
      {
        auth: 'read',
        response: { 200: FeatureState },
        detail: secured('Effective feature flags: plan defaults and tenant overrides'),
      },
    )
    .put(
      '/api/v1/tenants/:tenant_id/features',
      ({ params, actor, body }) => setFeatures(ctx, actor, params.tenant_id, body),
      {
        auth: 'admin',
        body: t.Record(t.String(), t.Unknown()),
        response: { 200: FeatureState },
        detail: secured('Override feature flags ({flag: true|false|null} or {features: {...}})'),
      },
    )
}
