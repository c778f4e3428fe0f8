import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import type { ServiceApp } from '../kernel/service.ts'
import {
  C2bPaymentList,
  C2bPaymentQuery,
  C2bPaymentView,
  RegisterShortcodeBody,
  ShortcodeList,
  ShortcodeView,
  ShortcodeWithUrls,
} from './c2b-model.ts'
import { C2bAccountView, SimulateC2bAccepted, SimulateC2bBody, ValidationAnswer } from './model.ts'
import {
  answered,
  providerCallback,
  securedDetail,
  sourceIp,
  TenantQuery,
} from './route-options.ts'
import type { Payments } from './service.ts'

/**
 * Customer payments (C2B): shortcode registration, listing, release and rotation; the
 * confirmations received; the aggregator account; the simulator's customer; and the provider's
 * validation and confirmation callbacks.
 */
export function c2bRoutes({
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
      '/api/v1/payments/c2b/register',
      async ({ body, actor, headers, set }) => {
        return answered(
          set,
          201,
          await payments.registerShortcode(actor, body, headers['idempotency-key']),
        )
      },
      {
        auth: 'admin',
        body: RegisterShortcodeBody,
        response: { 201: ShortcodeWithUrls },
        detail: securedDetail(
          "Register the platform's C2B confirmation and validation URLs for a till or paybill with the provider (Daraja Register URL); the answer is the only place the token-bearing URLs are shown; optional initiator for verifying each confirmation; optional Idempotency-Key; 409 when another tenant holds the shortcode",
        ),
      },
    )
    .get(
      '/api/v1/payments/c2b/shortcodes',
      ({ actor, query }) => payments.listShortcodes(actor, query.tenant_id),
      {
        auth: 'read',
        query: TenantQuery,
        response: { 200: ShortcodeList },
        detail: securedDetail(
          "The tenant's registered C2B shortcodes (never their token-bearing URLs: those are shown once, at registration or rotation)",
        ),
      },
    )
    .delete(
      '/api/v1/payments/c2b/shortcodes/:shortcode',
      ({ actor, params }) => payments.releaseShortcode(actor, params.shortcode),
      {
        auth: 'admin',
        params: t.Object({ shortcode: t.String() }),
        response: { 200: ShortcodeView },
        detail: securedDetail('Release a C2B shortcode so another tenant may register it'),
      },
    )
    .post(
      '/api/v1/payments/c2b/shortcodes/:shortcode/rotate',
      ({ actor, params }) => payments.rotateShortcode(actor, params.shortcode),
      {
        auth: 'admin',
        params: t.Object({ shortcode: t.String() }),
        response: { 200: ShortcodeWithUrls },
        detail: securedDetail(
          'New confirmation and validation URL tokens for a shortcode: registered with the provider, then the old URLs stop working (production Daraja: delete the old URLs on the M-Pesa portal first)',
        ),
      },
    )
    .get(
      '/api/v1/payments/c2b/payments',
      ({ actor, query }) => payments.listC2bPayments(actor, query),
      {
        auth: 'read',
        query: C2bPaymentQuery,
        response: { 200: C2bPaymentList },
        detail: securedDetail(
          'Customer payments to your tills and paybills, newest first, each with its verification status (received, verified, unverified, rejected, unrouted)',
        ),
      },
    )
    .get(
      '/api/v1/payments/c2b/payments/:trans_id',
      ({ actor, params, query }) => payments.getC2bPayment(actor, params.trans_id, query.tenant_id),
      {
        auth: 'read',
        params: t.Object({ trans_id: t.String({ maxLength: 40 }) }),
        query: TenantQuery,
        response: { 200: C2bPaymentView },
        detail: securedDetail(
          'One customer payment by its TransID, with its verification status and reason',
        ),
      },
    )
    .get(
      '/api/v1/payments/c2b/account',
      ({ actor, query }) => payments.c2bAccount(actor, query.tenant_id),
      {
        auth: 'read',
        query: TenantQuery,
        response: { 200: C2bAccountView },
        detail: securedDetail(
          "The tenant's account number on the platform's aggregator paybills (customers type it as the account)",
        ),
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
        detail: securedDetail(
          'Simulator mode only: a customer pays a till or paybill (the simulator then calls the registered URLs)',
        ),
      },
    )
  c2bCallbackRoutes({ app, ctx, payments })
  return app
}

/** The provider's C2B validation and confirmation: public, each with its own token in its URL. */
function c2bCallbackRoutes({
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
      '/api/v1/payments/c2b/validation',
      ({ query, body, request, server }) =>
        payments.c2bValidation(query, body, sourceIp(ctx, request, server)),
      {
        ...providerCallback(
          'Provider C2B validation request; public, token in URL; answers ResultCode "0" or a C2B000xx rejection',
        ),
        response: { 200: ValidationAnswer },
      },
    )
    .post(
      '/api/v1/payments/c2b/confirmation',
      ({ query, body, request, server }) =>
        payments.c2bConfirmation(query, body, sourceIp(ctx, request, server)),
      providerCallback(
        "Provider C2B confirmation; public, its own token in URL; idempotent on TransID; stored and answered at once, counted only once verified (or from Safaricom's addresses where the shortcode has no initiator); 422 C2B_OUT_OF_RANGE for an amount or time Daraja never sends",
      ),
    )
}
