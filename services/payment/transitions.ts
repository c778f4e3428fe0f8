import { type PaymentFailedEvent, topics } from '../../schema/events.ts'
import { disbursements, payments } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { toMajor } from '../kernel/money.ts'
import { appendAudit } from './audit.ts'
import type { PaymentDeps } from './deps.ts'
import { resultMessage } from './result-codes.ts'
import { byKind, getEntity, getPayment, KINDS, type Kind, type PaymentRow } from './rows.ts'

/** Each push and callback runs these (bench/payment.ts): prepared by hand, names from the tables. */
const P = sqlNames(payments)
const D = sqlNames(disbursements)
const ACCEPT_PAYMENT_SQL = `UPDATE ${P.$} SET ${P.checkoutRequestId} = ?, ${P.merchantRequestId} = ?,
  ${P.status} = 'pending', ${P.updatedAt} = ? WHERE ${P.id} = ?`
const ACCEPT_DISBURSEMENT_SQL = `UPDATE ${D.$} SET ${D.conversationId} = ?, ${D.status} = 'pending',
  ${D.updatedAt} = ? WHERE ${D.id} = ?`
const UNKNOWN_SQL = byKind(
  (n) => `UPDATE ${n.$} SET ${n.status} = 'unknown', ${n.resultDesc} = ?, ${n.updatedAt} = ?
    WHERE ${n.id} = ?`,
)
const REJECT_SQL = byKind(
  (n) => `UPDATE ${n.$} SET ${n.status} = 'failed', ${n.resultDesc} = ?, ${n.updatedAt} = ?
    WHERE ${n.id} = ? AND ${n.status} = 'initiating'`,
)

/**
 * The state changes before settlement, each with its audit row and events; call inside a write.
 * initiating → pending (accepted), initiating → unknown (answer lost), initiating → failed (the
 * provider certainly never got it), unknown → pending (its callback named the provider's id).
 */
export interface Change {
  kind: Kind
  tid: string
  id: string
  actor: string | null
  at: string
}

/** A payment's failure: the row, the status it ended in and the provider's code and words. */
interface Failure {
  p: PaymentRow
  status: string
  code: number | null
  desc: string
}

export function emitPaymentFailed(deps: PaymentDeps, db: Db, { p, status, code, desc }: Failure) {
  const data: PaymentFailedEvent = {
    checkout_request_id: p.checkoutRequestId ?? p.id,
    status,
    result_code: code,
    result_desc: desc,
    result_message: resultMessage({ status, resultCode: code, resultDesc: desc })!,
    amount: toMajor(p.amountCents),
    phone_number: p.phoneNumber,
    account_reference: p.accountReference,
  }
  emitEvent(db, { topic: topics.transactionsFailed, tenantId: p.tenantId, data }, deps.ctx.clock)
}

/** Records the provider's id for a request it accepted; false when one is recorded already. */
export function markAccepted(
  deps: PaymentDeps,
  db: Db,
  c: Change,
  ids: { providerId: string; merchantId?: string | undefined },
): boolean {
  const cur = getEntity(db, c.kind, c.tid, c.id)
  if (!cur || cur.providerId || (cur.status !== 'initiating' && cur.status !== 'unknown'))
    return false
  if (c.kind === 'stk')
    db.sqlite.query(ACCEPT_PAYMENT_SQL).run(ids.providerId, ids.merchantId ?? '', c.at, c.id)
  else db.sqlite.query(ACCEPT_DISBURSEMENT_SQL).run(ids.providerId, c.at, c.id)
  appendAudit(db, {
    tenantId: c.tid,
    entity: KINDS[c.kind].entity,
    entityId: c.id,
    action: 'accepted',
    fromStatus: cur.status,
    toStatus: 'pending',
    detail:
      c.kind === 'stk'
        ? { checkout_request_id: ids.providerId, merchant_request_id: ids.merchantId ?? '' }
        : { conversation_id: ids.providerId },
    actor: c.actor,
    at: c.at,
  })
  meterRequest(deps, db, c.tid)
  return true
}

/**
 * Billing's `payments` usage for one request the provider took: emitted once, when its id is
 * recorded (markAccepted) or, for a request whose answer was lost, when it settles as charged.
 */
export function meterRequest(deps: PaymentDeps, db: Db, tenantId: string): void {
  emitEvent(
    db,
    { topic: topics.usage, tenantId, data: { metric: 'payments', quantity: 1 } },
    deps.ctx.clock,
  )
}

/** The audit row of a change, in the transaction that makes it. */
function auditChange(
  db: Db,
  c: Change,
  a: { action: string; from: string; to: string; detail: Record<string, unknown> },
) {
  appendAudit(db, {
    tenantId: c.tid,
    entity: KINDS[c.kind].entity,
    entityId: c.id,
    action: a.action,
    fromStatus: a.from,
    toStatus: a.to,
    detail: a.detail,
    actor: c.actor,
    at: c.at,
  })
}

/** The provider may have the request but we do not have its answer: never failed, never retried. */
export function markUnknown(db: Db, c: Change, reason: string): boolean {
  const cur = getEntity(db, c.kind, c.tid, c.id)
  if (cur?.status !== 'initiating') return false
  db.sqlite.query(UNKNOWN_SQL[c.kind]).run(reason, c.at, c.id)
  auditChange(db, c, {
    action: 'unanswered',
    from: 'initiating',
    to: 'unknown',
    detail: { reason },
  })
  return true
}

/** The provider certainly did not take the request (refused before sending, or a 4xx answer). */
export function markRejected(deps: PaymentDeps, db: Db, c: Change, reason: string): void {
  db.sqlite.query(REJECT_SQL[c.kind]).run(reason, c.at, c.id)
  auditChange(db, c, { action: 'rejected', from: 'initiating', to: 'failed', detail: { reason } })
  if (c.kind === 'stk')
    emitPaymentFailed(deps, db, {
      p: getPayment(db, c.tid, c.id)!,
      status: 'failed',
      code: null,
      desc: reason,
    })
}
