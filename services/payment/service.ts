import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { appendAudit } from './audit.ts'
import { createCallbackAuth } from './callback-auth.ts'
import { createCallbacks } from './callbacks.ts'
import type { Daraja } from './daraja.ts'
import { createDeps } from './deps.ts'
import { checkKey, requestHash } from './idempotency.ts'
import { createInitiator } from './initiate.ts'
import { createProviderIndex } from './provider-index.ts'
import { createQueries } from './queries.ts'
import { createReconciler } from './reconcile.ts'
import { getDisbursement, getPayment } from './rows.ts'
import type { PaymentSettings } from './settings.ts'
import { type B2CBody, type StkPushBody, validateB2C, validateStkPush } from './validate.ts'
import { b2cAnswer, stkAnswer } from './views.ts'

export type { ReconcileReport } from './reconcile.ts'
export { type PaymentSettings, providerFromSettings } from './settings.ts'
export type { B2CBody, StkPushBody } from './validate.ts'
export { disbursementView, paymentView } from './views.ts'

/** The payment service's logic: everything the routes and the reconciliation job call. */
export function createPayments(
  ctx: ServiceContext<PaymentSettings>,
  opts: { provider?: Daraja } = {},
) {
  const deps = createDeps(ctx, opts.provider)
  const auth = createCallbackAuth(deps.cfg)
  const index = createProviderIndex(deps)
  const initiate = createInitiator(deps, index)
  const callbacks = createCallbacks(deps, auth, index)
  const queries = createQueries(deps, index)
  const reconcile = createReconciler(deps, index, callbacks.confirmByQuery)

  /** Starts an STK push; the answer (202) is the payment's ids and status. */
  async function stkPush(
    actor: Actor,
    body: StkPushBody,
    idemKey: string | null | undefined,
    requestId?: string,
    invoicePayment = false,
  ) {
    const tid = tenantFor(actor, body.tenant_id)
    const amount = validateStkPush(body)
    return (await initiate({
      kind: 'stk',
      tid,
      actorId: actor.userId,
      key: checkKey(idemKey),
      hash: requestHash({ ...body, tenant_id: tid }),
      requestId,
      // Paying the platform's own invoice is how a suspended tenant gets back; it is not metered.
      entitle: () => {
        if (!invoicePayment) assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' })
      },
      insert(db, id, at) {
        db.sqlite
          .query(
            `INSERT INTO payments (id, tenant_id, phone_number, amount_cents, account_reference,
              transaction_desc, status, user_id, purpose, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?, ?)`,
          )
          .run(
            id,
            tid,
            body.phone_number,
            amount * 100,
            body.account_reference,
            body.transaction_desc,
            actor.userId,
            invoicePayment ? 'invoice' : null,
            at,
            at,
          )
        appendAudit(db, {
          tenantId: tid,
          entity: 'payment',
          entityId: id,
          action: 'created',
          fromStatus: null,
          toStatus: 'initiating',
          detail: {
            amount,
            phone_number: body.phone_number,
            account_reference: body.account_reference,
          },
          actor: actor.userId,
          at,
        })
      },
      async call(id) {
        const a = await deps.provider.stkPush({
          phoneNumber: body.phone_number,
          amount,
          accountReference: body.account_reference,
          transactionDesc: body.transaction_desc,
          callbackUrl: auth.callbackUrl('stk', tid, id),
        })
        return { providerId: a.CheckoutRequestID, merchantId: a.MerchantRequestID }
      },
      answer: (db, id) => stkAnswer(getPayment(db, tid, id)!),
    })) as ReturnType<typeof stkAnswer>
  }

  /** Starts a B2C disbursement; the answer (202) is its ids and status. */
  async function b2cPay(
    actor: Actor,
    body: B2CBody,
    idemKey: string | null | undefined,
    requestId?: string,
  ) {
    const tid = tenantFor(actor, body.tenant_id)
    const amount = validateB2C(body)
    return (await initiate({
      kind: 'b2c',
      tid,
      actorId: actor.userId,
      key: checkKey(idemKey),
      hash: requestHash({ ...body, tenant_id: tid }),
      requestId,
      entitle: () => assertEntitled(ctx.registry, tid, { write: true, metric: 'payments' }),
      insert(db, id, at) {
        db.sqlite
          .query(
            `INSERT INTO disbursements (id, tenant_id, phone_number, amount_cents, remarks, occasion,
              status, user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'initiating', ?, ?, ?)`,
          )
          .run(
            id,
            tid,
            body.phone_number,
            amount * 100,
            body.remarks,
            body.occasion ?? null,
            actor.userId,
            at,
            at,
          )
        appendAudit(db, {
          tenantId: tid,
          entity: 'disbursement',
          entityId: id,
          action: 'created',
          fromStatus: null,
          toStatus: 'initiating',
          detail: { amount, phone_number: body.phone_number },
          actor: actor.userId,
          at,
        })
      },
      async call(id) {
        const a = await deps.provider.b2c({
          originatorConversationId: id,
          phoneNumber: body.phone_number,
          amount,
          remarks: body.remarks,
          occasion: body.occasion ?? '',
          resultUrl: auth.callbackUrl('b2c', tid, id),
          timeoutUrl: auth.callbackUrl('b2c', tid, id, '&timeout=1'),
        })
        return { providerId: a.ConversationID }
      },
      answer: (db, id) => b2cAnswer(getDisbursement(db, tid, id)!),
    })) as ReturnType<typeof b2cAnswer>
  }

  return {
    settings: deps.cfg,
    provider: deps.provider,
    stkPush,
    stkCallback: callbacks.stkCallback,
    b2cPay,
    b2cResult: callbacks.b2cResult,
    ...queries,
    reconcile,
    callbackUrl: auth.callbackUrl,
  }
}

export type Payments = ReturnType<typeof createPayments>
