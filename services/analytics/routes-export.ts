import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { CSV_OR_PDF_RESPONSES, downloadResponse } from '../kernel/download.ts'
import type { Actor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { topCustomers } from './customers.ts'
import { exportCsv } from './export.ts'
import { exportPdf } from './export-pdf.ts'
import { FilterQuery, secured } from './model.ts'
import type { ScopeArgs } from './routes-owner.ts'
import { isTradingParty } from './stored.ts'
import { readCells, type Scope, summarize, trendOf } from './summary.ts'

/**
 * The export of the filtered transactions: the CSV streamed row by row, or a PDF report of the
 * period (summary, top counterparties, months) read from the rollups.
 */
export function exportRoutes({
  app,
  ctx,
  scopeOf,
  advanced,
}: {
  app: ServiceApp
  ctx: ServiceContext
  scopeOf: (actor: Actor, q: ScopeArgs) => Scope
  advanced: (tenantId: string) => boolean
}) {
  return app.get(
    '/api/v1/analytics/export',
    ({ actor, query, requestId }) => {
      const scope = scopeOf(actor, query)
      const format = query.format ?? 'csv'
      const stamp = ctx.clock.now().toISOString().slice(0, 10)
      if (format === 'csv') {
        return downloadResponse({
          body: exportCsv(scope, query),
          name: `transactions-${scope.tenantId}-${stamp}`,
          type: 'csv',
          requestId,
        })
      }
      // The report reads rollups: period, scope, direction and category apply; the row-level
      // filters (amounts, phone, text) are for the CSV. Without advanced analytics it has no
      // RFM segments.
      const cells = readCells(scope, { byCategory: !!query.category }).filter(
        (c) =>
          (!query.direction || c.direction === query.direction) &&
          (!query.kind || c.kind === query.kind) &&
          (!query.category || c.category === query.category),
      )
      const withRfm = advanced(scope.tenantId)
      // Customers and suppliers are the counterparties of customer and supplier payments only.
      const parties = !query.kind || isTradingParty(query.kind)
      const pdf = exportPdf({
        tenantId: scope.tenantId,
        generatedAt: ctx.clock.now().toISOString(),
        from: query.from,
        to: query.to,
        filters: query,
        summary: summarize(cells),
        customers: parties
          ? topCustomers(scope, {
              limit: 10,
              direction: query.direction,
              category: query.category,
              withRfm,
              nowMs: ctx.clock.nowMs(),
            })
          : [],
        withSegments: withRfm,
        months: trendOf(cells, 'month'),
      })
      return downloadResponse({
        body: pdf,
        name: `analytics-${scope.tenantId}-${stamp}`,
        type: 'pdf',
        requestId,
      })
    },
    {
      auth: 'analyze',
      query: t.Object({
        ...FilterQuery,
        format: t.Optional(t.Union([t.Literal('csv'), t.Literal('pdf')])),
      }),
      detail: {
        ...secured('Export the filtered transactions as CSV (streamed) or a PDF report'),
        responses: CSV_OR_PDF_RESPONSES,
      },
    },
  )
}
