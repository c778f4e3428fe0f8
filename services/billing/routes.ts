import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { listEntitlements } from '../kernel/entitlements.ts'
import { listOf, wholeList } from '../kernel/lists.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { createServiceApp, type ServiceApp } from '../kernel/service.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import type { Billing } from './billing.ts'
import {
  CreatePlanBody,
  Plan,
  PlanLimits,
  Subscription,
  SubscriptionEvent,
  secured,
  UpgradeBody,
  UpgradedSubscription,
  UsageRecord,
  UsageRecordBody,
  UsageStats,
} from './model.ts'
import { upgradeSubscription } from './pay.ts'
import { createPlan, listPlans, toPlan } from './plans.ts'
import { invoiceRoutes } from './routes-invoices.ts'
import { ensureSubscription, listSubscriptionEvents, toSubscription } from './subscriptions.ts'
import { recordUsage, syncEntitlements, usageStats } from './usage.ts'

const TenantParams = t.Object({ tenant_id: t.String() })

/** A subscription for the path's tenant, created on the free plan when it has none yet. */
function subscriptionFor(b: Billing, tenantId: string) {
  const now = b.ctx.clock.now()
  const { sub, created } = ensureSubscription(b, { tenantId: assertTenantId(tenantId), at: now })
  if (created) syncEntitlements(b, tenantId, now)
  return sub
}

/** Every limit of a plan, unlimited: what a limit left out of a new plan is. */
const UNLIMITED = { transactions: null, statements: null, users: null, webhook_endpoints: null }

/** The billing service's HTTP controller (SPEC §4 Billing, DESIGN §10–11). */
export function createBillingApp(ctx: ServiceContext, b: Billing) {
  /** The tenant a path names: one the actor may see, and one that exists (404 otherwise). */
  const knownTenant = (actor: Actor, named: string): string =>
    ctx.registry.assertExists(tenantFor(actor, assertTenantId(named)))
  /**
   * Every tenant's entitlements, for a part on its own data dir at its start (daemon/profiles.ts):
   * asked as the platform, not routed by the gateway.
   */
  const entitlementsForParts = () => ({ data: listEntitlements(ctx.registry) })
  const app = createServiceApp(ctx, {
    title: 'Billing',
    description: 'Plans, subscriptions, usage metering and invoices',
    // Billing is the way out of a suspension: paying and changing plans stay open.
    suspendedWrites: 'allow',
  })
  app
    .get('/internal/entitlements', entitlementsForParts, {
      auth: 'operator',
      detail: { hide: true },
    })
    .get('/api/v1/billing/plans', () => wholeList(listPlans(b.db).map(toPlan)), {
      auth: 'read',
      response: { 200: listOf(Plan) },
      detail: secured('List the subscription plans'),
    })
    .post(
      '/api/v1/billing/plans',
      ({ body, set }) => {
        set.status = 201
        // A limit left out is unlimited, as null says (README, Billing).
        const limits = { ...UNLIMITED, ...body.limits }
        return toPlan(createPlan(b.db, { ...body, limits }, ctx.clock.now()))
      },
      {
        auth: 'operator',
        idempotent: true,
        body: t.Composite([
          t.Omit(CreatePlanBody, ['limits']),
          t.Object({ limits: t.Partial(PlanLimits) }),
        ]),
        response: { 201: Plan },
        detail: secured('Create a plan (platform operator only)'),
      },
    )
    .get(
      '/api/v1/billing/subscriptions/:tenant_id',
      ({ params, actor }) =>
        toSubscription(subscriptionFor(b, knownTenant(actor, params.tenant_id))),
      {
        auth: 'read',
        params: TenantParams,
        response: { 200: Subscription },
        detail: secured('Current subscription of a tenant'),
      },
    )
    .get(
      '/api/v1/billing/subscriptions/:tenant_id/events',
      ({ params, actor }) => {
        const tenantId = tenantFor(actor, assertTenantId(params.tenant_id))
        subscriptionFor(b, tenantId)
        return { data: listSubscriptionEvents(b, tenantId) }
      },
      {
        auth: 'read',
        params: TenantParams,
        response: { 200: t.Object({ data: t.Array(SubscriptionEvent) }) },
        detail: secured('History of subscription changes of a tenant'),
      },
    )
    .post(
      '/api/v1/billing/subscriptions/upgrade',
      ({ body, actor }) => {
        const tenantId = tenantFor(actor, assertTenantId(body.tenant_id))
        const { sub, terms } = upgradeSubscription(b, { tenantId, plan: body.plan })
        return { ...toSubscription(sub), plan_revision: sub.planRevision, plan_terms: terms }
      },
      {
        auth: 'admin',
        idempotent: true,
        body: UpgradeBody,
        response: { 200: UpgradedSubscription },
        detail: secured('Change the plan of a tenant (prorated on the next invoice)'),
      },
    )
  usageRoutes({ app, ctx, b, knownTenant })
  invoiceRoutes({ app, ctx, b })
  return app
}

/** Recording usage and reading a tenant's usage against its plan's limits. */
function usageRoutes({
  app,
  ctx,
  b,
  knownTenant,
}: {
  app: ServiceApp
  ctx: ServiceContext
  b: Billing
  knownTenant: (actor: Actor, named: string) => string
}) {
  return app
    .post(
      '/api/v1/billing/usage/record',
      ({ body, actor, set }) => {
        const tenantId = tenantFor(actor, assertTenantId(body.tenant_id))
        const r = recordUsage(
          b,
          {
            tenantId,
            metric: body.metric,
            quantity: body.quantity,
            eventId: body.event_id,
            source: 'api',
          },
          ctx.clock.now(),
        )
        set.status = r.duplicate ? 200 : 201
        return r
      },
      {
        auth: 'admin',
        idempotent: true,
        body: UsageRecordBody,
        response: { 200: UsageRecord, 201: UsageRecord },
        detail: secured('Record usage (idempotent by event_id)'),
      },
    )
    .get(
      '/api/v1/billing/usage/:tenant_id',
      async ({ params, actor, request }) => {
        const tenantId = knownTenant(actor, params.tenant_id)
        const stats = usageStats(b, tenantId, ctx.clock.now())
        // Users and webhook endpoints are counted by the services that own them.
        const [users, endpoints] = await Promise.all([
          ctx.client
            .call<{ users: number }>('auth', '/api/v1/auth/users/count', {
              query: { tenant_id: tenantId },
              token: actor.token,
              from: request,
            })
            .then(
              (r) => r.users,
              () => null,
            ),
          ctx.client
            .call<{ webhook_endpoints: { used: number } }>('webhook', '/api/v1/webhooks/usage', {
              query: { tenant_id: tenantId },
              token: actor.token,
              from: request,
            })
            .then(
              (r) => r.webhook_endpoints.used,
              () => null,
            ),
        ])
        stats.metrics.users.used = users
        stats.metrics.webhook_endpoints.used = endpoints
        return stats
      },
      {
        auth: 'read',
        params: TenantParams,
        response: { 200: UsageStats },
        detail: secured('Usage of the current period against the plan limits'),
      },
    )
}
