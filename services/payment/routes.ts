import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { REPLAYED_HEADER } from '../kernel/idempotency.ts'
import { createServiceApp } from '../kernel/service.ts'
import {
  C2bPaymentList,
  C2bPaymentQuery,
  C2bPaymentView,
  RegisterShortcodeBody,
  ShortcodeList,
  ShortcodeView,
  ShortcodeWithUrls,
} from './c2b-model.ts'
import { darajaCheck, darajaCheckRoute } from './go-live-route.ts'
import { wasReplayed } from './idempotency.ts'
import {
  B2CAccepted,
  B2CBody,
  C2bAccountView,
  CallbackAck,
  CallbackQuery,
  DisbursementView,
  ListQuery,
  PaymentAlerts,
  PaymentList,
  PaymentStatusView,
  ReconcileReport,
  SimulateC2bAccepted,
  SimulateC2bBody,
  StkPushAccepted,
  StkPushBody,
  ValidationAnswer,
} from './model.ts'
import { asyncRead, asyncStart, secured, sourceIp } from './route-options.ts'
import type { Payments } from './service.ts'

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
        if (wasReplayed(answer)) set.headers[REPLAYED_HEADER] = 'true'
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
    .get('/api/v1/payments/:id', ({ params, actor }) => payments.get(actor, params.id), {
      auth: 'read',
      params: t.Object({ id: t.String({ maxLength: 100 }) }),
      response: { 200: PaymentList.properties.data.items },
      detail: {
        summary:
          "One payment by its id or its checkout_request_id (404 for another tenant's, as for a missing one)",
        tags: ['payments'],
        ...secured,
      },
    })
    .post(
      '/api/v1/payments/b2c',
      async ({ body, actor, headers, set, requestId }) => {
        const answer = await payments.b2cPay(actor, body, headers['idempotency-key'], requestId)
        set.status = 202
        if (wasReplayed(answer)) set.headers[REPLAYED_HEADER] = 'true'
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
    .post(
      '/api/v1/payments/c2b/register',
      async ({ body, actor, headers, set }) => {
        const answer = await payments.registerShortcode(actor, body, headers['idempotency-key'])
        set.status = 201
        if (wasReplayed(answer)) set.headers[REPLAYED_HEADER] = 'true'
        return answer
      },
      {
        auth: 'admin',
        body: RegisterShortcodeBody,
        response: { 201: ShortcodeWithUrls },
        detail: {
          summary:
            "Register the platform's C2B confirmation and validation URLs for a till or paybill with the provider (Daraja Register URL); the answer is the only place the token-bearing URLs are shown; optional initiator for verifying each confirmation; optional Idempotency-Key; 409 when another tenant holds the shortcode",
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get(
      '/api/v1/payments/c2b/shortcodes',
      ({ actor, query }) => payments.listShortcodes(actor, query.tenant_id),
      {
        auth: 'read',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: ShortcodeList },
        detail: {
          summary:
            "The tenant's registered C2B shortcodes (never their token-bearing URLs: those are shown once, at registration or rotation)",
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .delete(
      '/api/v1/payments/c2b/shortcodes/:shortcode',
      ({ actor, params }) => payments.releaseShortcode(actor, params.shortcode),
      {
        auth: 'admin',
        params: t.Object({ shortcode: t.String() }),
        response: { 200: ShortcodeView },
        detail: {
          summary: 'Release a C2B shortcode so another tenant may register it',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .post(
      '/api/v1/payments/c2b/shortcodes/:shortcode/rotate',
      ({ actor, params }) => payments.rotateShortcode(actor, params.shortcode),
      {
        auth: 'admin',
        params: t.Object({ shortcode: t.String() }),
        response: { 200: ShortcodeWithUrls },
        detail: {
          summary:
            'New confirmation and validation URL tokens for a shortcode: registered with the provider, then the old URLs stop working (production Daraja: delete the old URLs on the M-Pesa portal first)',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get(
      '/api/v1/payments/c2b/payments',
      ({ actor, query }) => payments.listC2bPayments(actor, query),
      {
        auth: 'read',
        query: C2bPaymentQuery,
        response: { 200: C2bPaymentList },
        detail: {
          summary:
            'Customer payments to your tills and paybills, newest first, each with its verification status (received, verified, unverified, rejected, unrouted)',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get(
      '/api/v1/payments/c2b/payments/:trans_id',
      ({ actor, params, query }) => payments.getC2bPayment(actor, params.trans_id, query.tenant_id),
      {
        auth: 'read',
        params: t.Object({ trans_id: t.String({ maxLength: 40 }) }),
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: C2bPaymentView },
        detail: {
          summary: 'One customer payment by its TransID, with its verification status and reason',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .get(
      '/api/v1/payments/c2b/account',
      ({ actor, query }) => payments.c2bAccount(actor, query.tenant_id),
      {
        auth: 'read',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: C2bAccountView },
        detail: {
          summary:
            "The tenant's account number on the platform's aggregator paybills (customers type it as the account)",
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .post(
      '/api/v1/payments/c2b/simulate',
      async ({ body, set }) => {
        const answer = await payments.simulateC2b(body)
        set.status = 202
        return answer
      },
      {
        auth: 'pay',
        body: SimulateC2bBody,
        response: { 202: SimulateC2bAccepted },
        detail: {
          summary:
            'Simulator mode only: a customer pays a till or paybill (the simulator then calls the registered URLs)',
          tags: ['payments'],
          ...secured,
        },
      },
    )
    .post(
      '/api/v1/payments/c2b/validation',
      ({ query, body, request, server }) =>
        payments.c2bValidation(query, body, sourceIp(ctx, request, server)),
      {
        parse: 'text',
        query: CallbackQuery,
        response: { 200: ValidationAnswer },
        detail: {
          summary:
            'Provider C2B validation request; public, token in URL; answers ResultCode "0" or a C2B000xx rejection',
          tags: ['payments'],
        },
      },
    )
    .post(
      '/api/v1/payments/c2b/confirmation',
      ({ query, body, request, server }) =>
        payments.c2bConfirmation(query, body, sourceIp(ctx, request, server)),
      {
        parse: 'text',
        query: CallbackQuery,
        response: { 200: CallbackAck },
        detail: {
          summary:
            "Provider C2B confirmation; public, its own token in URL; idempotent on TransID; stored and answered at once, counted only once verified (or from Safaricom's addresses where the shortcode has no initiator); 422 C2B_OUT_OF_RANGE for an amount or time Daraja never sends",
          tags: ['payments'],
        },
      },
    )
    .post(
      '/api/v1/payments/callback/result',
      ({ query, body, request, server }) =>
        payments.providerResult(query, body, sourceIp(ctx, request, server)),
      {
        parse: 'text',
        query: CallbackQuery,
        response: { 200: CallbackAck },
        detail: {
          summary:
            'Provider result (and queue timeout) of a transaction status, account balance or reversal request; public, token in URL',
          tags: ['payments'],
        },
      },
    )
    .post(
      '/api/v1/payments/transaction-status',
      async ({ actor, body, set }) => {
        set.status = 202
        return payments.startProviderRequest(actor, 'status', body)
      },
      asyncStart('status', 'pay'),
    )
    .get(
      '/api/v1/payments/transaction-status/:id',
      ({ actor, params }) => payments.readProviderRequest(actor, 'status', params.id),
      asyncRead('transaction status'),
    )
    .post(
      '/api/v1/payments/account-balance',
      async ({ actor, body, set }) => {
        set.status = 202
        return payments.startProviderRequest(actor, 'balance', body)
      },
      asyncStart('balance', 'pay'),
    )
    .get(
      '/api/v1/payments/account-balance/:id',
      ({ actor, params }) => payments.readProviderRequest(actor, 'balance', params.id),
      asyncRead('account balance'),
    )
    .post(
      '/api/v1/payments/reversals',
      async ({ actor, body, set }) => {
        set.status = 202
        return payments.startProviderRequest(actor, 'reversal', body)
      },
      asyncStart('reversal', 'admin'),
    )
    .get(
      '/api/v1/payments/reversals/:id',
      ({ actor, params }) => payments.readProviderRequest(actor, 'reversal', params.id),
      asyncRead('reversal'),
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
    .post(
      '/api/v1/payments/daraja/check',
      () => darajaCheck(ctx, payments.settings),
      darajaCheckRoute(),
    )
    .get('/api/v1/payments/alerts', () => payments.alerts(), {
      auth: 'operator',
      response: { 200: PaymentAlerts },
      detail: {
        summary:
          'Operator alerts about money: the provider refusing the platform credentials, payments with no provider answer for over an hour',
        tags: ['payments'],
        ...secured,
      },
    })
}
