import { t } from 'elysia'
import { StkPushAccepted } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { downloadResponse } from '../kernel/download.ts'
import { invalidField } from '../kernel/errors.ts'
import { isOperator, tenantFor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import type { Billing } from './billing.ts'
import { runCycle } from './cycle.ts'
import { getInvoiceRow, listInvoices, paymentAttempts, toInvoice } from './invoices.ts'
import {
  CycleReport,
  Invoice,
  InvoiceList,
  InvoiceStatus,
  PayBody,
  RunCycleBody,
  secured,
} from './model.ts'
import { payInvoice } from './pay.ts'
import { renderInvoicePdf } from './pdf.ts'
import { voidInvoice } from './settle.ts'
import { ensureSubscription } from './subscriptions.ts'
import { syncEntitlements } from './usage.ts'

const _InvoiceParams = t.Object({ invoice_id: t.String() })
const InvoiceParams = t.Object({ invoice_id: t.String() })
const deadlineOf = (request: Request) => {
  const v = Number(request.headers.get('x-request-deadline'))
  return Number.isFinite(v) && v > 0 ? v : undefined
}

/** A tenant's invoices: list, read, PDF, pay (STK push), void; and the billing cycle run by hand. */
export function invoiceRoutes({
  app,
  ctx,
  b,
}: {
  app: ServiceApp
  ctx: ServiceContext
  b: Billing
}) {
  return app
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
        const sub = ensureSubscription(b, { tenantId: row.tenantId, at: ctx.clock.now() }).sub
        const pdf = renderInvoicePdf(
          inv,
          { name: 'mmp Mobile-Money Analytics', address: ['Nairobi, Kenya', 'billing@mmp.local'] },
          sub.tenantName ?? row.tenantId,
        )
        return downloadResponse({ body: pdf, name: inv.number, type: 'pdf', requestId })
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
        const res = await payInvoice(b, {
          actor,
          invoiceId: params.invoice_id,
          phoneNumber: body.phone_number,
          fwd: {
            requestId,
            deadline: deadlineOf(request),
          },
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
