import { disbursements, payments } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { appendAudit } from './audit.ts'
import { assertHttpsCallbacks, type CallbackAuth } from './callback-auth.ts'
import type { PaymentDeps } from './deps.ts'
import { checkKey, requestHash } from './idempotency.ts'
import type { createInitiator } from './initiate.ts'
import { getDisbursement, getPayment } from './rows.ts'
import { insertValues } from './sql-row.ts'
import { type B2CBody, type StkPushBody, validateB2C, validateStkPush } from './validate.ts'
import { b2cAnswer, stkAnswer } from './views.ts'

/** What starting a payment needs: the service's parts and the one initiation path. */
export interface StartCtx {
  deps: PaymentDeps
  auth: CallbackAuth
  initiate: ReturnType<typeof createInitiator>
}

/** One request to start: who asks, with which Idempotency-Key, under which request id. */
export interface StartInput<B> {
  actor: Actor
  body: B
  idemKey: string | null | undefined
  requestId?: string | undefined
}

/** The `created` audit row of a payment or disbursement, in the transaction that inserts it. */
function auditCreated(
  db: Db,
  c: {
    entity: 'payment' | 'disbursement'
    tid: string
    id: string
    detail: Record<string, unknown>
    actor: string | null
    at: string
  },
) {
  appendAudit(db, {
    tenantId: c.tid,
    entity: c.entity,
    entityId: c.id,
    action: 'created',
    fromStatus: null,
    toStatus: 'initiating',
    detail: c.detail,
    actor: c.actor,
    at: c.at,
  })
}

/** Whose request it is and the Idempotency-Key it is bound to (with the hash of its body). */
const keyed = <B extends object>(input: StartInput<unknown>, tid: string, body: B) => ({
  tid,
  actorId: input.actor.userId,
  key: checkKey(input.idemKey),
  hash: requestHash({ ...body, tenant_id: tid }),
  requestId: input.requestId,
})

/** The columns a payment or disbursement starts with empty (the provider's answer fills them). */
const UNANSWERED = {
  status: 'initiating',
  resultCode: null,
  resultDesc: null,
  userId: null,
  transactionId: null,
  owner: null,
} as const

/**
 * Starts an STK push; the answer (202) is the payment's ids and status. Paying the platform's own
 * invoice (`invoicePayment`) is how a suspended tenant gets back: it is not metered.
 */
export async function startStkPush(
  { deps, auth, initiate }: StartCtx,
  input: StartInput<StkPushBody> & { invoicePayment?: boolean },
) {
  const { actor } = input
  const tid = tenantFor(actor, input.body.tenant_id)
  const body = validateStkPush(input.body)
  const amount = body.amount
  return (await initiate({
    kind: 'stk',
    ...keyed(input, tid, body),
    phone: body.phone_number,
    entitle: () => {
      if (!input.invoicePayment)
        assertEntitled(deps.ctx.registry, tid, { write: true, metric: 'payments' })
      assertHttpsCallbacks(deps.cfg)
    },
    insert(db, id, at) {
      insertValues(db, payments, {
        ...UNANSWERED,
        id,
        tenantId: tid,
        checkoutRequestId: null,
        merchantRequestId: null,
        phoneNumber: body.phone_number,
        amountCents: amount * 100,
        accountReference: body.account_reference,
        transactionDesc: body.transaction_desc,
        mpesaReceiptNumber: null,
        transactionDate: null,
        counterpartyName: null,
        callbackBody: null,
        callbackAt: null,
        userId: actor.userId,
        purpose: input.invoicePayment ? 'invoice' : null,
        createdAt: at,
        updatedAt: at,
      })
      auditCreated(db, {
        entity: 'payment',
        tid,
        id,
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
export async function startB2c({ deps, auth, initiate }: StartCtx, input: StartInput<B2CBody>) {
  const { actor } = input
  const tid = tenantFor(actor, input.body.tenant_id)
  const body = validateB2C(input.body)
  const amount = body.amount
  return (await initiate({
    kind: 'b2c',
    ...keyed(input, tid, body),
    entitle: () => {
      assertEntitled(deps.ctx.registry, tid, { write: true, metric: 'payments' })
      assertHttpsCallbacks(deps.cfg)
    },
    insert(db, id, at) {
      insertValues(db, disbursements, {
        ...UNANSWERED,
        id,
        tenantId: tid,
        conversationId: null,
        phoneNumber: body.phone_number,
        amountCents: amount * 100,
        remarks: body.remarks,
        occasion: body.occasion ?? null,
        transactionReceipt: null,
        receiverName: null,
        userId: actor.userId,
        createdAt: at,
        updatedAt: at,
      })
      auditCreated(db, {
        entity: 'disbursement',
        tid,
        id,
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
