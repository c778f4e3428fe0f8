import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { AppError } from '../kernel/errors.ts'
import { wholeList } from '../kernel/lists.ts'
import { tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { segmentSizes, topCustomers } from './customers.ts'
import { buildInsights } from './insights.ts'
import {
  CustomerList,
  FilterQuery,
  InsightList,
  Limit,
  ReconciliationResponse,
  ScopeQuery,
  SegmentList,
  SummaryResponse,
  secured,
  Transaction,
  TransactionPage,
  TrendResponse,
} from './model.ts'
import { reconcileStatement } from './reconciliation.ts'
import { exportRoutes } from './routes-export.ts'
import { dayPeriodOf, ownerRoutes, scopeReader } from './routes-owner.ts'
import { readCells, summaryOf, trendOf } from './summary.ts'
import { getTransaction, listTransactions } from './transactions.ts'

/** Whether the tenant's plan has advanced analytics (RFM segments, insights against a period). */
function hasAdvancedAnalytics(ctx: ServiceContext, tenantId: string): boolean {
  return ctx.registry.placement(tenantId).features?.advanced_analytics !== false
}

function requireAdvanced(ctx: ServiceContext, tenantId: string) {
  if (!hasAdvancedAnalytics(ctx, tenantId)) {
    throw new AppError(
      'FEATURE_DISABLED',
      "advanced analytics is not enabled for this tenant's plan",
      {
        extra: { feature: 'advanced_analytics' },
      },
    )
  }
}

/** The analytics service's HTTP controller (SPEC analytics endpoints, DESIGN §11). */
export function createAnalyticsApp(ctx: ServiceContext) {
  const scopeOf = scopeReader(ctx)
  const advanced = (tenantId: string) => hasAdvancedAnalytics(ctx, tenantId)
  const app = createServiceApp(ctx, {
    title: 'Analytics',
    description: 'Summaries, trends, customers, insights and exports of mobile-money transactions',
  })
  ownerRoutes(app, ctx, advanced)
    .get('/api/v1/analytics/summary', ({ actor, query }) => summaryOf(scopeOf(actor, query)), {
      auth: 'read',
      query: t.Object(ScopeQuery),
      response: { 200: SummaryResponse },
      detail: secured('Key metrics for the tenant, or the caller with scope=me'),
    })
    .get(
      '/api/v1/analytics/transactions',
      ({ actor, query }) =>
        listTransactions(scopeOf(actor, query), {
          f: query,
          limit: query.limit ?? 50,
          cursor: query.cursor,
        }),
      {
        auth: 'read',
        query: t.Object({ ...FilterQuery, limit: Limit, cursor: t.Optional(t.String()) }),
        response: { 200: TransactionPage },
        detail: secured('Transactions, newest first, with filters and a keyset cursor'),
      },
    )
    .get(
      '/api/v1/analytics/reconciliation',
      ({ actor, query }) => reconcileStatement(scopeOf(actor, query)),
      {
        auth: 'read',
        query: t.Object({
          tenant_id: ScopeQuery.tenant_id,
          from: ScopeQuery.from,
          to: ScopeQuery.to,
        }),
        response: { 200: ReconciliationResponse },
        detail: secured(
          'The imported statement against the live channels: missing rows both ways, amounts that disagree, closing against running balance',
        ),
      },
    )
    .get(
      '/api/v1/analytics/transactions/:id',
      ({ actor, params, query }) => {
        const tenantId = tenantFor(actor, query.tenant_id)
        return getTransaction(
          { db: ctx.registry.tenant('analytics', tenantId), tenantId },
          params.id,
        )
      },
      {
        auth: 'read',
        params: t.Object({ id: t.String({ maxLength: 100 }) }),
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: Transaction },
        detail: secured(
          "One transaction by id (404 for another tenant's id, as for a missing one)",
        ),
      },
    )
    .get(
      '/api/v1/analytics/customers',
      ({ actor, query }) => {
        const scope = scopeOf(actor, query)
        return wholeList(
          topCustomers(scope, {
            limit: query.limit ?? 10,
            // People who pay the tenant by default; `out` ranks suppliers and bills.
            direction: query.direction ?? 'in',
            withRfm: advanced(scope.tenantId),
            nowMs: ctx.clock.nowMs(),
          }),
        )
      },
      {
        auth: 'read',
        query: t.Object({
          ...ScopeQuery,
          direction: t.Optional(
            t.Union([t.Literal('in'), t.Literal('out')], {
              description: 'in (default): customers, who pay you; out: suppliers, whom you pay',
            }),
          ),
          limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1, default: 10 })),
        }),
        response: { 200: CustomerList },
        detail: secured('Top counterparties by volume with count, total, last seen and segment'),
      },
    )
    .get(
      '/api/v1/analytics/insights',
      ({ actor, query }) => {
        const scope = scopeOf(actor, query)
        const { as_of, data } = buildInsights(scope, {
          nowMs: ctx.clock.nowMs(),
          advanced: advanced(scope.tenantId),
          period: dayPeriodOf(scope, query),
        })
        return { ...wholeList(data), as_of }
      },
      {
        auth: 'read',
        query: t.Object(ScopeQuery),
        response: { 200: InsightList },
        detail: secured(
          'Rule-based insights, each with the numbers behind it; with from/to (dates), of that period against as many days before it',
        ),
      },
    )
    .get(
      '/api/v1/analytics/trends',
      ({ actor, query }) => {
        const interval = query.interval ?? 'day'
        return { interval, data: trendOf(readCells(scopeOf(actor, query)), interval) }
      },
      {
        auth: 'read',
        query: t.Object({
          ...ScopeQuery,
          interval: t.Optional(t.Union([t.Literal('day'), t.Literal('week'), t.Literal('month')])),
        }),
        response: { 200: TrendResponse },
        detail: secured('Money in and out, revenue, expenses and net per day, ISO week or month'),
      },
    )
    .get(
      '/api/v1/analytics/segments',
      ({ actor, query }) => {
        const scope = scopeOf(actor, { tenant_id: query.tenant_id })
        requireAdvanced(ctx, scope.tenantId)
        return {
          as_of: ctx.clock.now().toISOString(),
          data: segmentSizes(scope, ctx.clock.nowMs()),
        }
      },
      {
        auth: 'read',
        query: t.Object({ tenant_id: ScopeQuery.tenant_id }),
        response: { 200: SegmentList },
        detail: secured('RFM customer segments with their sizes and value (advanced analytics)'),
      },
    )
  exportRoutes({ app, ctx, scopeOf, advanced })
  return app
}
