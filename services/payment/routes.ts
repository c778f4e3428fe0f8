import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { createServiceApp } from '../kernel/service.ts'
import {
  B2CAccepted,
  B2CBody,
  CallbackAck,
  CallbackQuery,
  DisbursementView,
  ListQuery,
  PaymentList,
  PaymentStatusView,
  ReconcileReport,
  StkPushAccepted,
  StkPushBody,
} from './model.ts'
import type { Payments } from './service.ts'

const secured = { security: [{ bearer: [] }] }

/**
 * The caller's address for the callback allow-list: what the gateway forwarded under its hop
 * signature (the rightmost entry, added by the gateway itself), otherwise the socket's peer. An
 * X-Forwarded-For sent straight to the payment port is not believed.
 */
function sourceIp(
  ctx: ServiceContext,
  request: Request,
  server: { requestIP(r: Request): { address: string } | null } | null,
): string | null {
  const xff = ctx.hop?.trusted(request.headers, 'x-forwarded-for')
  if (xff) return xff.split(',').pop()!.trim() || null
  return server?.requestIP(request)?.address ?? null
}

/** The payment service's HTTP controller. */
export function createPaymentsApp(ctx: ServiceContext, payments: Payments) {
  return createServiceApp(ctx, {
    title: 'Payments',
    description:
      'M-Pesa customer-prompt payments (STK push), disbursements (B2C), provider callbacks and reconciliation',
  })
    .post(
      '/api/v1/payments/stkpush',
      async ({ body, actor, headers, set, requestId, request }) => {
        const answer = await payments.stkPush(
          actor,
          body,
          headers['idempotency-key'],
          requestId,
          ctx.hop?.trusted(request.headers, PURPOSE_HEADER) === INVOICE_PAYMENT,
        )
        set.status = 202
        return answer
      },
      {
        auth: 'pay',
        body: StkPushBody,
        response: { 202: StkPushAccepted },
        detail: {
          summary:
            'Prompt a customer to pay (M-Pesa STK push); optional Idempotency-Key header (a retry answers the same, or 409 IDEMPOTENCY_IN_PROGRESS with Retry-After while the first is running)',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get(
      '/api/v1/payments/status/:checkout_request_id',
      ({ params, actor }) => payments.status(actor, params.checkout_request_id),
      {
        auth: 'read',
        params: t.Object({ checkout_request_id: t.String() }),
        response: { 200: PaymentStatusView },
        detail: { summary: 'Status of a payment request', tags: ['payments'], ...secured },
      },
    )
    .get('/api/v1/payments', ({ query, actor }) => payments.list(actor, query), {
      auth: 'read',
      query: ListQuery,
      response: { 200: PaymentList },
      detail: { summary: 'Recent payment requests, newest first', tags: ['payments'], ...secured },
    })
    .post(
      '/api/v1/payments/b2c',
      async ({ body, actor, headers, set, requestId }) => {
        const answer = await payments.b2cPay(actor, body, headers['idempotency-key'], requestId)
        set.status = 202
        return answer
      },
      {
        auth: 'pay',
        body: B2CBody,
        response: { 202: B2CAccepted },
        detail: {
          summary: 'Send money to a customer (M-Pesa B2C disbursement); optional Idempotency-Key',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get('/api/v1/payments/b2c/:id', ({ params, actor }) => payments.b2cStatus(actor, params.id), {
      auth: 'read',
      params: t.Object({ id: t.String() }),
      response: { 200: DisbursementView },
      detail: { summary: 'Status of a disbursement', tags: ['payments'], ...secured },
    })
    .post(
      '/api/v1/payments/callback',
      ({ query, body, request, server, requestId }) =>
        payments.stkCallback(
          query,
          body,
          sourceIp(ctx, request, server),
          requestId,
          request.headers.get('x-callback-signature'),
        ),
      {
        parse: 'text',
        query: CallbackQuery,
        response: { 200: CallbackAck },
        detail: {
          summary:
            'Provider callback for STK push results; public, authenticated by the per-request token in its URL',
          tags: ['payments'],
        },
      },
    )
    .post(
      '/api/v1/payments/callback/b2c',
      ({ query, body, request, server }) =>
        payments.b2cResult(query, body, sourceIp(ctx, request, server)),
      {
        parse: 'text',
        query: CallbackQuery,
        response: { 200: CallbackAck },
        detail: {
          summary:
            'Provider result (and queue timeout) callback for disbursements; public, token in URL',
          tags: ['payments'],
        },
      },
    )
    .post('/api/v1/payments/reconcile', () => payments.reconcile(), {
      auth: 'operator',
      response: { 200: ReconcileReport },
      detail: {
        summary: 'Ask the provider about payments pending too long, now',
        tags: ['payments'],
        ...secured,
      },
    })
}
