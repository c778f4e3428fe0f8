import { t } from 'elysia'
import { UsageStats } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { wholeList } from '../kernel/lists.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import { moveTenantToInstance } from './instance-move.ts'
import { createJobs, type Job, JobView, waitFor } from './jobs.ts'
import {
  CreatedTenant,
  CreateTenantBody,
  FeatureState,
  Invitation,
  InviteBody,
  Tenant,
  TenantList,
  UpdateTenantBody,
  UpgradeBody,
  UpgradeResult,
  UserList,
} from './model.ts'
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
import { tenantInPath } from './store.ts'
import { upgradeTenant } from './upgrade.ts'
import {
  type CallInfo,
  inviteUser,
  listTenantUsers,
  removeTenantUser,
  tenantUsage,
} from './users.ts'

const secured = (summary: string) => ({ summary, tags: ['tenants'], security: [{ bearer: [] }] })

function callOf(actor: Actor, requestId: string, request: Request): CallInfo {
  const deadline = Number(request.headers.get('x-request-deadline'))
  return {
    token: actor.token,
    requestId,
    deadline: Number.isFinite(deadline) && deadline > 0 ? deadline : undefined,
  }
}

/** The tenant service's HTTP controller (DESIGN §10–11). */
export function createTenantsApp(ctx: ServiceContext) {
  const jobs = createJobs(ctx.registry.dataDir)
  /** The work's answer when it is quick; otherwise 202 with the job, and where to follow it. */
  const asJob = async <T>(
    set: { status?: number | string; headers: Record<string, string | number> },
    request: Request,
    kind: Job['kind'],
    tenantId: string,
    work: () => Promise<T>,
  ): Promise<T | Job> => {
    const r = await jobs.run(kind, tenantId, work, waitFor(request))
    if (r.done) return r.value
    set.status = 202
    set.headers.location = `/api/v1/tenants/${tenantId}/jobs/${r.job.id}`
    set.headers['retry-after'] = '1'
    return r.job
  }
  return createServiceApp(ctx, {
    title: 'Tenants',
    description: 'Tenants, their users, plans, isolation tiers and feature flags',
  })
    .post(
      '/api/v1/tenants',
      async ({ body, actor, requestId, request, set }) => {
        const created = await createTenant(ctx, callOf(actor, requestId, request), body)
        set.status = 201
        return created
      },
      {
        auth: 'operator',
        idempotent: true,
        body: CreateTenantBody,
        response: { 201: CreatedTenant },
        detail: secured('Create a tenant and invite its first Admin (operator)'),
      },
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
    .patch(
      '/api/v1/tenants/:tenant_id',
      ({ params, actor, body }) => updateTenant(ctx, actor, params.tenant_id, body),
      {
        auth: 'admin',
        body: UpdateTenantBody,
        response: { 200: Tenant },
        detail: secured('Update name, time zone or settings'),
      },
    )
    .put(
      '/api/v1/tenants/:tenant_id',
      ({ params, actor, body }) => updateTenant(ctx, actor, params.tenant_id, body),
      {
        auth: 'admin',
        body: UpdateTenantBody,
        response: { 200: Tenant },
        detail: secured('Update name, time zone or settings'),
      },
    )
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
    .put(
      '/api/v1/tenants/:tenant_id/upgrade',
      ({ params, actor, body, requestId, request, set }) =>
        asJob(
          set,
          request,
          'tier_move',
          tenantFor(actor, assertTenantId(params.tenant_id, 'tenant_id')),
          () =>
            upgradeTenant(ctx, callOf(actor, requestId, request), actor, params.tenant_id, body),
        ),
      {
        auth: 'admin',
        body: UpgradeBody,
        response: { 200: UpgradeResult, 202: JobView },
        detail: secured(
          'Change the plan: isolation tier, feature defaults, data moved (202 with a job when it takes longer; Prefer: respond-async asks for the job at once)',
        ),
      },
    )
    .get(
      '/api/v1/tenants/:tenant_id/jobs/:job_id',
      ({ params, actor }) => jobs.get(tenantInPath(ctx, actor, params.tenant_id).id, params.job_id),
      {
        auth: 'admin',
        response: { 200: JobView },
        detail: secured('Follow a tier or instance move answered 202'),
      },
    )
    .post(
      '/api/v1/tenants/:tenant_id/instances',
      ({ params, actor, body, request, set }) =>
        asJob(
          set,
          request,
          'instance_move',
          tenantFor(actor, assertTenantId(params.tenant_id, 'tenant_id')),
          () => moveTenantToInstance(ctx, actor, params.tenant_id, body),
        ),
      {
        auth: 'operator',
        body: t.Object({
          service: t.String({ description: 'a service that runs as several instances' }),
          instance: t.String({ description: 'the instance URL, as discovery lists it' }),
        }),
        response: {
          200: t.Object(
            {
              tenant_id: t.String(),
              service: t.String(),
              from: t.String(),
              to: t.String(),
              moved: t.Boolean({ description: 'false: the tenant was there already' }),
              rows: t.Integer({ description: 'rows the new instance took over' }),
              replayed: t.Integer({ description: 'events published again for it' }),
            },
            { title: 'InstanceMove' },
          ),
          202: JobView,
        },
        detail: secured(
          'Move a tenant to another instance of a partitioned service, reads working meanwhile (operator)',
        ),
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
    .post(
      '/api/v1/tenants/:tenant_id/users',
      async ({ params, actor, body, requestId, request, set }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        const user = await inviteUser(ctx, callOf(actor, requestId, request), actor, row, body)
        set.status = 201
        return user
      },
      {
        auth: 'admin',
        idempotent: true,
        body: InviteBody,
        response: { 201: Invitation },
        detail: secured('Invite a user (the token is accepted at /auth/accept-invite)'),
      },
    )
    .get(
      '/api/v1/tenants/:tenant_id/users',
      async ({ params, actor, requestId, request }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        return wholeList(await listTenantUsers(ctx, callOf(actor, requestId, request), row.id))
      },
      {
        auth: 'admin',
        response: { 200: UserList },
        detail: secured("List a tenant's users"),
      },
    )
    .delete(
      '/api/v1/tenants/:tenant_id/users/:user_id',
      async ({ params, actor, requestId, request, set }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        await removeTenantUser(ctx, callOf(actor, requestId, request), row.id, params.user_id)
        set.status = 204
      },
      { auth: 'admin', detail: secured('Remove a user from a tenant') },
    )
    .get(
      '/api/v1/tenants/:tenant_id/usage',
      async ({ params, actor, requestId, request }) => {
        return tenantUsage(
          ctx,
          callOf(actor, requestId, request),
          tenantInPath(ctx, actor, params.tenant_id),
        )
      },
      {
        auth: 'read',
        response: { 200: UsageStats },
        detail: secured('Current usage and limits (from billing)'),
      },
    )
}
