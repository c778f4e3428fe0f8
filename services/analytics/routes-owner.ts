import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { CSV_OR_PDF_RESPONSES, downloadResponse } from '../kernel/download.ts'
import { invalidField } from '../kernel/errors.ts'
import { wholeList } from '../kernel/lists.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import type { createServiceApp } from '../kernel/service.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { dataSpan, GROUPS, type Group, statementSpan, topOfGroup } from './groups.ts'
import { buildInsights, type DayPeriod } from './insights.ts'
import { CustomerList, ScopeQuery, secured } from './model.ts'
import { parseRange } from './range.ts'
import { reconcileStatement } from './reconciliation.ts'
import {
  groupReport,
  insightsReport,
  type Report,
  reconciliationReport,
  reportCsv,
  reportPdf,
} from './reports.ts'
import type { Scope } from './summary.ts'

export type ScopeArgs = { tenant_id?: string; from?: string; to?: string; scope?: 'me' | 'tenant' }

/** The tenant, user and period a request reads (the tenant's zone makes a date a local day). */
export function scopeReader(ctx: ServiceContext) {
  return (actor: Actor, q: ScopeArgs): Scope => {
    const tenantId = tenantFor(actor, q.tenant_id)
    const zone = timeZone(ctx.registry.placement(tenantId).timezone)
    return {
      db: ctx.registry.tenant('analytics', tenantId),
      tenantId,
      userId: q.scope === 'me' ? actor.userId : null,
      zone,
      range: parseRange(zone, q.from, q.to),
    }
  }
}

const DAY = /^\d{4}-\d{2}-\d{2}$/

/**
 * A `from`/`to` pair as whole local days for the insights, or null without either: a missing
 * bound is the first (or last) day with data. Times of day are refused: insights compare days.
 */
export function dayPeriodOf(scope: Scope, q: { from?: string; to?: string }): DayPeriod | null {
  if (!q.from && !q.to) return null
  for (const f of ['from', 'to'] as const)
    if (q[f] && !DAY.test(q[f])) throw invalidField(f, 'must be a date (YYYY-MM-DD)')
  const span = dataSpan(scope)
  const from = q.from || span.first_day
  const to = q.to || span.last_day
  return from && to ? { from, to } : null
}

const GroupQuery = t.Optional(
  t.UnionEnum(GROUPS, {
    description: 'customers (default), suppliers, staff, landlord, utilities, agents, lenders',
  }),
)

const GroupList = t.Composite([CustomerList, t.Object({ group: t.String() })])

/**
 * Routes the owner's dashboard reads beside the SPEC ones: the days the data covers (to anchor
 * periods), counterparties by group, and the owner reports (CSV and PDF) of customers, insights
 * and reconciliation for a period.
 */
export function ownerRoutes(
  app: ReturnType<typeof createServiceApp>,
  ctx: ServiceContext,
  advanced: (tenantId: string) => boolean,
) {
  const scopeOf = scopeReader(ctx)
  const reportOf = (actor: Actor, report: string, q: ScopeArgs & { group?: Group }): Report => {
    const scope = scopeOf(actor, q)
    const head = { tenantId: scope.tenantId, from: q.from, to: q.to }
    const nowMs = ctx.clock.nowMs()
    if (report === 'insights') {
      const { as_of, data } = buildInsights(scope, {
        nowMs,
        advanced: advanced(scope.tenantId),
        period: dayPeriodOf(scope, q),
      })
      return insightsReport(data, { ...head, asOf: as_of })
    }
    if (report === 'reconciliation') return reconciliationReport(reconcileStatement(scope), head)
    const group = q.group ?? 'customers'
    const list = topOfGroup(scope, group, {
      limit: 500,
      withRfm: advanced(scope.tenantId),
      nowMs,
    })
    return groupReport(group, list, head)
  }
  return app
    .get(
      '/api/v1/analytics/period',
      ({ actor, query }) => {
        const scope = scopeOf(actor, { tenant_id: query.tenant_id })
        return {
          today: scope.zone.dayOf(ctx.clock.nowMs()),
          ...dataSpan(scope),
          statement: statementSpan(scope),
        }
      },
      {
        auth: 'read',
        query: t.Object({ tenant_id: ScopeQuery.tenant_id }),
        response: {
          200: t.Object({
            today: t.String({ description: "today in the tenant's time zone" }),
            first_day: t.Nullable(t.String({ description: 'first local day with data' })),
            last_day: t.Nullable(t.String({ description: 'last local day with data' })),
            statement: t.Nullable(t.Object({ from: t.String(), to: t.String() })),
          }),
        },
        detail: secured(
          'The days the data covers (first and last day with a transaction) and the imported statements',
        ),
      },
    )
    .get(
      '/api/v1/analytics/counterparties',
      ({ actor, query }) => {
        const scope = scopeOf(actor, query)
        const group = query.group ?? 'customers'
        const list = topOfGroup(scope, group, {
          limit: query.limit ?? 10,
          withRfm: advanced(scope.tenantId),
          nowMs: ctx.clock.nowMs(),
        })
        return { ...wholeList(list), group }
      },
      {
        auth: 'read',
        query: t.Object({
          ...ScopeQuery,
          group: GroupQuery,
          limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1, default: 10 })),
        }),
        response: { 200: GroupList },
        detail: secured(
          'Top counterparties of one group (customers, suppliers, staff, landlord, utilities, agents, lenders) by volume',
        ),
      },
    )
    .get(
      '/api/v1/analytics/reports/:report',
      ({ actor, params, query, requestId }) => {
        const report = reportOf(actor, params.report, query)
        const stamp = ctx.clock.now().toISOString().slice(0, 10)
        const tenant = tenantFor(actor, query.tenant_id)
        const pdf = query.format === 'pdf'
        return downloadResponse({
          body: pdf ? reportPdf(report, ctx.clock.now().toISOString()) : reportCsv(report),
          name: `${report.name}-${tenant}-${stamp}`,
          type: pdf ? 'pdf' : 'csv',
          requestId,
        })
      },
      {
        auth: 'analyze',
        params: t.Object({
          report: t.UnionEnum(['customers', 'insights', 'reconciliation']),
        }),
        query: t.Object({
          ...ScopeQuery,
          group: GroupQuery,
          format: t.Optional(t.UnionEnum(['csv', 'pdf'])),
        }),
        detail: {
          ...secured(
            'A report of the period as CSV or PDF: customers (or another group), insights, reconciliation',
          ),
          responses: CSV_OR_PDF_RESPONSES,
        },
      },
    )
}
