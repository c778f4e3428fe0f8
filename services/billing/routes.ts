import { t } from 'elysia'
import { StkPushAccepted } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { listEntitlements } from '../kernel/entitlements.ts'
import { invalidField } from '../kernel/errors.ts'
import { listOf, wholeList } from '../kernel/lists.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import type { Billing } from './billing.ts'
import { runCycle } from './cycle.ts'
import { getInvoiceRow, listInvoices, paymentAttempts, toInvoice } from './invoices.ts'
import {
  CreatePlanBody,
  CycleReport,
  Invoice,
  InvoiceList,
  InvoiceStatus,
  PayBody,
  Plan,
  PlanLimits,
  RunCycleBody,
  Subscription,
  SubscriptionEvent,
  UpgradeBody,
  UpgradedSubscription,
  UsageRecord,
  UsageRecordBody,
  UsageStats,
} from './model.ts'
import { payInvoice, upgradeSubscription } from './pay.ts'
import { renderInvoicePdf } from './pdf.ts'
import { createPlan, listPlans, toPlan } from './plans.ts'
import { voidInvoice } from './settle.ts'
import { ensureSubscription, listSubscriptionEvents, toSubscription } from './subscriptions.ts'
import { recordUsage, syncEntitlements, usageStats } from './usage.ts'

const secured = (summary: string) => ({ summary, tags: ['billing'], security: [{ bearer: [] }] })
const TenantParams = t.Object({ tenant_id: t.String() })
const InvoiceParams = t.Object({ invoice_id: t.String() })
const deadlineOf = (request: Request) => {
  const v = Number(request.headers.get('x-request-deadline'))
  return Number.isFinite(v) && v > 0 ? v : undefined
}

/** A subscription for the path's tenant, created on the free plan when it has none yet. */
function subscriptionFor(b: Billing, tenantId: string) {
  const now = b.ctx.clock.now()
  const { sub, created } = ensureSubscription(b, assertTenantId(tenantId), now)
  if (created) syncEntitlements(b, tenantId, now)
  return sub
}

/** The billing service's HTTP controller (SPEC §4 Billing, DESIGN §10–11). */
/** Every limit of a plan, unlimited: what a limit left out of a new plan is. */
const UNLIMITED = { transactions: null, statements: null, users: null, webhook_endpoints: null }

export function createBillingApp(ctx: ServiceContext, b: Billing) {
  /** The tenant a path names: one the actor may see, and one that exists (404 otherwise). */
  const knownTenant = (actor: Actor, named: string): string =>
    ctx.registry.assertExists(tenantFor(actor, assertTenantId(named)))
  /**
   * Every tenant's entitlements, for a part on its own data dir at its start (daemon/profiles.ts):
   * asked as the platform, not routed by the gateway.
   */
  const entitlementsForParts = () => ({ data: listEntitlements(ctx.registry) })
  return createServiceApp(ctx, {
    title: 'Billing',
    description: 'Plans, subscriptions, usage metering and invoices',
    // Billing is the way out of a suspension: paying and changing plans stay open.
    suspendedWrites: 'allow',
  })
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
    .get(
      '/api/v1/billing/invoices',
      ({ query, actor }) => {
        const tenantId =
          query.tenant_id !== undefined
            ? tenantFor(actor, assertTenantId(query.tenant_id))
            : isOperator(actor)
              ? null
              : actor.tenantId
        return listInvoices(b, tenantId, {
          limit: query.limit ?? 50,
          cursor: query.cursor,
          status: query.status,
        })
      },
      {
        auth: 'admin',
        query: t.Object({
          tenant_id: t.Optional(t.String()),
          status: t.Optional(InvoiceStatus),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
          cursor: t.Optional(t.String()),
        }),
        response: { 200: InvoiceList },
        detail: secured('List invoices of the current tenant (operator: any or all)'),
      },
    )
    .get(
      '/api/v1/billing/invoices/:invoice_id',
      ({ params, actor }) => {
        const row = getInvoiceRow(b, actor, params.invoice_id)
        return toInvoice(row, paymentAttempts(b, row.id))
      },
      {
        auth: 'admin',
        params: InvoiceParams,
        response: { 200: Invoice },
        detail: secured('One invoice with its payment attempts'),
      },
    )
    .get(
      '/api/v1/billing/invoices/:invoice_id/pdf',
      ({ params, actor, requestId }) => {
        const row = getInvoiceRow(b, actor, params.invoice_id)
        const inv = toInvoice(row)
        const sub = ensureSubscription(b, row.tenantId, ctx.clock.now()).sub
        const pdf = renderInvoicePdf(
          inv,
          { name: 'mmp Mobile-Money Analytics', address: ['Nairobi, Kenya', 'billing@mmp.local'] },
          sub.tenantName ?? row.tenantId,
        )
        return new Response(pdf, {
          headers: {
            'content-type': 'application/pdf',
            'content-disposition': `attachment; filename="${inv.number}.pdf"`,
            'x-request-id': requestId,
          },
        })
      },
      {
        auth: 'admin',
        params: InvoiceParams,
        detail: {
          ...secured('Download an invoice as PDF'),
          responses: {
            200: {
              description: 'the invoice',
              content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
            },
          },
        },
      },
    )
    .post(
      '/api/v1/billing/invoices/:invoice_id/pay',
      async ({ params, body, actor, requestId, request, set }) => {
        const res = await payInvoice(b, actor, params.invoice_id, body.phone_number, {
          requestId,
          deadline: deadlineOf(request),
        })
        set.status = 202
        return res
      },
      {
        auth: 'admin',
        idempotent: true,
        params: InvoiceParams,
        body: PayBody,
        response: { 202: StkPushAccepted },
        detail: secured('Pay an invoice by M-Pesa STK push through the payment service'),
      },
    )
    .post(
      '/api/v1/billing/invoices/:invoice_id/void',
      ({ params }) => {
        const now = ctx.clock.now()
        const inv = voidInvoice(b, params.invoice_id, now)
        syncEntitlements(b, inv.tenantId, now)
        return toInvoice(inv)
      },
      {
        auth: 'operator',
        params: InvoiceParams,
        response: { 200: Invoice },
        detail: secured('Void an unpaid invoice (operator only)'),
      },
    )
    .post(
      '/api/v1/billing/run-cycle',
      ({ body }) => {
        const at = body?.at ? new Date(body.at) : ctx.clock.now()
        if (Number.isNaN(at.getTime())) throw invalidField('at', 'must be an ISO 8601 time')
        return runCycle(b, at)
      },
      {
        auth: 'operator',
        body: t.Optional(RunCycleBody),
        response: { 200: CycleReport },
        detail: secured('Run the billing cycle now or as of a time (operator only)'),
      },
    )
}
