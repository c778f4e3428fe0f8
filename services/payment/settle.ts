import { type PaymentFailedEvent, type TransactionEvent, topics } from '../../schema/events.ts'
import { disbursements, payments } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { faultPoint } from '../kernel/faults.ts'
import { derivedId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { appendAudit } from './audit.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import {
  type DisbursementRow,
  getDisbursement,
  getPayment,
  type Kind,
  OPEN,
  type PaymentRow,
  statusOfResult,
} from './rows.ts'
import { emitPaymentFailed, meterRequest } from './transitions.ts'

/** Every settle runs one of these (bench/payment.ts): prepared by hand, names from the tables. */
const P = sqlNames(payments)
const D = sqlNames(disbursements)
const SETTLE_PAYMENT_SQL = `UPDATE ${P.$} SET ${P.status} = ?, ${P.resultCode} = ?,
  ${P.resultDesc} = ?, ${P.mpesaReceiptNumber} = ?, ${P.transactionDate} = ?,
  ${P.counterpartyName} = ?, ${P.transactionId} = ?, ${P.updatedAt} = ? WHERE ${P.id} = ?`
const SETTLE_DISBURSEMENT_SQL = `UPDATE ${D.$} SET ${D.status} = ?, ${D.resultCode} = ?,
  ${D.resultDesc} = ?, ${D.transactionReceipt} = ?, ${D.receiverName} = ?,
  ${D.transactionId} = ?, ${D.updatedAt} = ? WHERE ${D.id} = ?`

/** The provider's final word on a request, from a callback, a B2C result or a query. */
export interface Outcome {
  /** Daraja's ResultCode; null when the provider sent none we can read (ends `failed`). */
  code: number | null
  desc: string
  receipt: string | null
  transactionDate: string | null
  counterpartyName: string | null
  /** What settled it, for the audit row: 'callback', 'signed callback', 'reconcile', ... */
  via: string
}

/** The request an outcome settles: which kind, whose, which one, in which database. */
interface Settling {
  db: Db
  kind: Kind
  tid: string
  id: string
}

/**
 * The one settle path (callbacks, B2C results and queries alike): an open payment or disbursement
 * moves to its final state with its audit row and its success or failed event, in one
 * transaction. False when it was already final, so a repeat changes nothing.
 */
export async function settle(deps: PaymentDeps, s: Settling, o: Outcome): Promise<boolean> {
  const done = await grouped(s.db, () =>
    s.kind === 'stk' ? settlePayment(deps, s, o) : settleDisbursement(deps, s, o),
  )
  if (done) faultPoint('payment.after_settle_commit')
  if (done && o.code === 0) deps.alerts.clear('provider_setup')
  // The index row is closed in batches by the reconciliation job, off the hot path.
  return done
}

/**
 * Where an outcome takes a request: its final status and, for a success, its transaction id
 * (derived from the request: settled again after a restore, it is the same transaction).
 */
function ending(deps: PaymentDeps, id: string, o: Outcome) {
  const status = o.code === null ? 'failed' : statusOfResult(o.code)
  const ok = status === 'success'
  return { status, ok, at: deps.nowIso(), txnId: ok ? derivedId('txn', id) : null }
}

/** The `settled` audit row of a payment or disbursement, in the settling transaction. */
function auditSettled(
  db: Db,
  s: {
    entity: 'payment' | 'disbursement'
    tid: string
    id: string
    from: string
    to: string
    o: Outcome
    at: string
    receipt: Record<string, unknown>
  },
) {
  appendAudit(db, {
    tenantId: s.tid,
    entity: s.entity,
    entityId: s.id,
    action: 'settled',
    fromStatus: s.from,
    toStatus: s.to,
    detail: { result_code: s.o.code, result_desc: s.o.desc, ...s.receipt, via: s.o.via },
    actor: null,
    at: s.at,
  })
}

function settlePayment(deps: PaymentDeps, { db, tid, id }: Settling, o: Outcome): boolean {
  const p = getPayment(db, tid, id)
  if (!p || !OPEN.has(p.status)) return false
  const { status, ok, at, txnId } = ending(deps, id, o)
  db.sqlite
    .query(SETTLE_PAYMENT_SQL)
    .run(
      status,
      o.code,
      o.desc,
      ok ? o.receipt : null,
      ok ? o.transactionDate : null,
      o.counterpartyName,
      txnId,
      at,
      id,
    )
  auditSettled(db, {
    entity: 'payment',
    tid,
    id,
    from: p.status,
    to: status,
    o,
    at,
    receipt: ok ? { mpesa_receipt_number: o.receipt } : {},
  })
  // A push whose answer was lost never passed markAccepted: it is metered when it settles charged.
  if (ok && !p.checkoutRequestId) meterRequest(deps, db, tid)
  if (ok) emitSuccess(deps, db, paymentTransaction(p, { txnId: txnId!, o, at }))
  else emitPaymentFailed(deps, db, { p, status, code: o.code, desc: o.desc })
  return true
}

function settleDisbursement(deps: PaymentDeps, { db, tid, id }: Settling, o: Outcome): boolean {
  const d = getDisbursement(db, tid, id)
  if (!d || !OPEN.has(d.status)) return false
  const { status, ok, at, txnId } = ending(deps, id, o)
  db.sqlite
    .query(SETTLE_DISBURSEMENT_SQL)
    .run(status, o.code, o.desc, ok ? o.receipt : null, o.counterpartyName, txnId, at, id)
  auditSettled(db, {
    entity: 'disbursement',
    tid,
    id,
    from: d.status,
    to: status,
    o,
    at,
    receipt: { transaction_receipt: o.receipt },
  })
  const reference = d.occasion ?? d.remarks.slice(0, 12)
  if (ok && !d.conversationId) meterRequest(deps, db, tid)
  if (ok) emitSuccess(deps, db, disbursementTransaction(d, { txnId: txnId!, o, at }, reference))
  else {
    const data: PaymentFailedEvent = {
      checkout_request_id: d.id,
      status,
      result_code: o.code,
      result_desc: o.desc,
      amount: toMajor(d.amountCents),
      phone_number: d.phoneNumber,
      account_reference: reference,
    }
    emitEvent(db, { topic: topics.transactionsFailed, tenantId: tid, data }, deps.ctx.clock)
  }
  return true
}

export const emitSuccess = (
  deps: PaymentDeps,
  db: Db,
  data: TransactionEvent & { tenant: string },
) => {
  const { tenant, ...event } = data
  emitEvent(
    db,
    { topic: topics.transactionsSuccess, tenantId: tenant, data: event },
    deps.ctx.clock,
  )
}

/** What a success event says of a settled request: its transaction id, outcome and time. */
interface Settled {
  txnId: string
  o: Outcome
  at: string
}

function paymentTransaction(p: PaymentRow, { txnId, o, at }: Settled) {
  return {
    tenant: p.tenantId,
    transaction_id: txnId,
    occurred_at: o.transactionDate ?? at,
    amount: toMajor(p.amountCents),
    direction: 'in' as const,
    counterparty_name: o.counterpartyName,
    counterparty_phone: p.phoneNumber,
    description: `M-Pesa payment ${p.accountReference}`,
    receipt_number: o.receipt,
    balance: null,
    source: 'payment' as const,
    channel: 'stk' as const,
    user_id: p.userId,
    checkout_request_id: p.checkoutRequestId ?? p.id,
    account_reference: p.accountReference,
    ...(p.purpose === 'invoice' ? { purpose: 'invoice' as const } : {}),
  }
}

function disbursementTransaction(d: DisbursementRow, { txnId, o, at }: Settled, reference: string) {
  return {
    tenant: d.tenantId,
    transaction_id: txnId,
    occurred_at: o.transactionDate ?? at,
    amount: toMajor(d.amountCents),
    direction: 'out' as const,
    counterparty_name: o.counterpartyName,
    counterparty_phone: d.phoneNumber,
    description: `M-Pesa disbursement ${d.remarks}`,
    receipt_number: o.receipt,
    balance: null,
    source: 'payment' as const,
    channel: 'b2c' as const,
    user_id: d.userId,
    account_reference: reference,
  }
}
