import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { createServiceApp, type ServiceApp } from '../kernel/service.ts'
import { darajaCheck, darajaCheckRoute } from './go-live-route.ts'
import {
  B2CAccepted,
  B2CBody,
  DisbursementView,
  ListQuery,
  PaymentAlerts,
  PaymentList,
  PaymentStatusView,
  ReconcileReport,
  StkPushAccepted,
  StkPushBody,
} from './model.ts'
import {
  answered,
  asyncRead,
  asyncStart,
  providerCallback,
  securedDetail,
  sourceIp,
} from './route-options.ts'
import { c2bRoutes } from './routes-c2b.ts'
import type { Payments } from './service.ts'

/** The payment service's HTTP controller. */
export function createPaymentsApp(ctx: ServiceContext, payments: Payments) {
  const app = createServiceApp(ctx, {
    title: 'Payments',
    description:
      'M-Pesa customer-prompt payments (STK push), disbursements (B2C), provider callbacks and reconciliation',
  })
  app
    .post(
      '/api/v1/payments/stkpush',
      async ({ body, actor, headers, set, requestId, request }) => {
        return answered(
          set,
          202,
          await payments.stkPush({
            actor,
            body,
            idemKey: headers['idempotency-key'],
            requestId,
            invoicePayment: ctx.hop?.trusted(request.headers, PURPOSE_HEADER) === INVOICE_PAYMENT,
          }),
        )
      },
      {
        auth: 'pay',
        body: StkPushBody,
        response: { 202: StkPushAccepted },
        detail: securedDetail(
          'Prompt a customer to pay (M-Pesa STK push); optional Idempotency-Key header (a retry answers the same, or 409 IDEMPOTENCY_IN_PROGRESS with Retry-After while the first is running)',
        ),
      },
    )
    .get(
      '/api/v1/payments/status/:checkout_request_id',
      ({ params, actor }) => payments.status(actor, params.checkout_request_id),
      {
        auth: 'read',
        params: t.Object({ checkout_request_id: t.String() }),
        response: { 200: PaymentStatusView },
        detail: securedDetail('Status of a payment request'),
      },
    )
    .get('/api/v1/payments', ({ query, actor }) => payments.list(actor, query), {
      auth: 'read',
      query: ListQuery,
      response: { 200: PaymentList },
      detail: securedDetail('Recent payment requests, newest first'),
    })
    .get('/api/v1/payments/:id', ({ params, actor }) => payments.get(actor, params.id), {
      auth: 'read',
      params: t.Object({ id: t.String({ maxLength: 100 }) }),
      response: { 200: PaymentList.properties.data.items },
      detail: securedDetail(
        "One payment by its id or its checkout_request_id (404 for another tenant's, as for a missing one)",
      ),
    })
    .post(
      '/api/v1/payments/b2c',
      async ({ body, actor, headers, set, requestId }) => {
        return answered(
          set,
          202,
          await payments.b2cPay({ actor, body, idemKey: headers['idempotency-key'], requestId }),
        )
      },
      {
        auth: 'pay',
        body: B2CBody,
        response: { 202: B2CAccepted },
        detail: securedDetail(
          'Send money to a customer (M-Pesa B2C disbursement); optional Idempotency-Key',
        ),
      },
    )
    .get('/api/v1/payments/b2c/:id', ({ params, actor }) => payments.b2cStatus(actor, params.id), {
      auth: 'read',
      params: t.Object({ id: t.String() }),
      response: { 200: DisbursementView },
      detail: securedDetail('Status of a disbursement'),
    })
  callbackRoutes({ app, ctx, payments })
  c2bRoutes({ app, ctx, payments })
  requestRoutes({ app, payments })
  return app
    .post('/api/v1/payments/reconcile', () => payments.reconcile(), {
      auth: 'operator',
      response: { 200: ReconcileReport },
      detail: securedDetail('Ask the provider about payments pending too long, now'),
    })
    .post(
      '/api/v1/payments/daraja/check',
      () => darajaCheck(ctx, payments.settings),
      darajaCheckRoute(),
    )
    .get('/api/v1/payments/alerts', () => payments.alerts(), {
      auth: 'operator',
      response: { 200: PaymentAlerts },
      detail: securedDetail(
        'Operator alerts about money: the provider refusing the platform credentials, payments with no provider answer for over an hour',
      ),
    })
}

/** Transaction Status, Account Balance and Reversal: each started (202) and read back by id. */
const REQUEST_ROUTES = [
  { path: 'transaction-status', kind: 'status', role: 'pay', label: 'transaction status' },
  { path: 'account-balance', kind: 'balance', role: 'pay', label: 'account balance' },
  { path: 'reversals', kind: 'reversal', role: 'admin', label: 'reversal' },
] as const

function requestRoutes({ app, payments }: { app: ServiceApp; payments: Payments }) {
  for (const r of REQUEST_ROUTES)
    app
      .post(
        `/api/v1/payments/${r.path}`,
        async ({ actor, body, set }) => {
          set.status = 202
          return payments.startProviderRequest(actor, r.kind, body)
        },
        asyncStart(r.kind, r.role),
      )
      .get(
        `/api/v1/payments/${r.path}/:id`,
        ({ actor, params }) => payments.readProviderRequest(actor, r.kind, params.id),
        asyncRead(r.label),
      )
}

/** The provider's callbacks: public, each authenticated by the token in its URL. */
function callbackRoutes({
  app,
  ctx,
  payments,
}: {
  app: ServiceApp
  ctx: ServiceContext
  payments: Payments
}) {
  app
    .post(
      '/api/v1/payments/callback',
      ({ query, body, request, server, requestId }) =>
        payments.stkCallback({
          query,
          raw: body,
          sourceIp: sourceIp(ctx, request, server),
          requestId,
          bodySignature: request.headers.get('x-callback-signature'),
        }),
      providerCallback(
        'Provider callback for STK push results; public, authenticated by the per-request token in its URL',
      ),
    )
    .post(
      '/api/v1/payments/callback/b2c',
      ({ query, body, request, server }) =>
        payments.b2cResult(query, body, sourceIp(ctx, request, server)),
      providerCallback(
        'Provider result (and queue timeout) callback for disbursements; public, token in URL',
      ),
    )
    .post(
      '/api/v1/payments/callback/result',
      ({ query, body, request, server }) =>
        payments.providerResult(query, body, sourceIp(ctx, request, server)),
      providerCallback(
        'Provider result (and queue timeout) of a transaction status, account balance or reversal request; public, token in URL',
      ),
    )
}
