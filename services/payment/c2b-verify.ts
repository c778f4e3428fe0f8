import { c2bPayments } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { appendAudit } from './audit.ts'
import type { Accounts } from './c2b-accounts.ts'
import type { CredentialBox } from './c2b-secrets.ts'
import { getShortcode, type ShortcodeRow } from './c2b-shortcode-store.ts'
import { parseDarajaTimestamp } from './daraja.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import type { ProviderResult } from './provider-store.ts'
import { emitSuccess } from './settle.ts'
import { type Narrow, selectAll } from './sql-row.ts'

/** A stored confirmation (c2b_payments). */
export type C2bRow = Narrow<
  typeof c2bPayments.$inferSelect,
  { status: 'received' | 'verified' | 'unverified' | 'rejected' | 'unrouted' }
>

/**
 * Each confirmation is read and moved on by these (bench/c2b.ts): prepared by hand, names from
 * the table.
 */
const c = sqlNames(c2bPayments)
const GET_SQL = `SELECT ${selectAll(c2bPayments)} FROM ${c.$} WHERE ${c.tenantId} = ? AND ${c.transId} = ?`
const MOVE_SQL = `UPDATE ${c.$} SET ${c.status} = ?, ${c.statusReason} = ?, ${c.updatedAt} = ?
  WHERE ${c.id} = ?`
const NOT_YET_SQL = `UPDATE ${c.$} SET ${c.statusReason} = ?, ${c.updatedAt} = ?
  WHERE ${c.tenantId} = ? AND ${c.transId} = ? AND ${c.status} = 'received'`

/** How far the provider's time of a transaction may be from the confirmation's TransTime. */
const TIME_SLACK_MS = 5 * 60_000

export const getC2bPayment = (db: Db, tid: string, transId: string) =>
  db.sqlite.query<C2bRow, [string, string]>(GET_SQL).get(tid, transId)

/**
 * Why the provider's Transaction Status result disagrees with a confirmation, or null when it
 * agrees: completed, same amount, paid to the same shortcode, at the same time (within 5 min).
 */
export function disagreement(row: C2bRow, r: ProviderResult): string | null {
  const p = r.params
  const status = p.TransactionStatus === undefined ? 'Completed' : String(p.TransactionStatus)
  if (!/^completed$/i.test(status)) return `the provider reports the transaction as ${status}`
  const amount = Math.round(Number(p.Amount) * 100)
  if (amount !== row.amountCents)
    return `the amount disagrees: the confirmation says ${row.amountCents / 100}, the provider ${Number.isFinite(amount) ? amount / 100 : 'none'}`
  const parties = [p.CreditPartyName, p.DebitPartyName].map((v) => String(v ?? ''))
  if (!parties.some((v) => v === row.shortcode || v.startsWith(`${row.shortcode} `)))
    return `the shortcode disagrees: the provider did not pay ${row.shortcode} (${parties.filter(Boolean).join(', ') || 'no party named'})`
  const when = parseDarajaTimestamp(p.FinalisedTime ?? p.InitiatedTime)
  if (!when) return 'the provider gave no time for the transaction'
  if (Math.abs(when.getTime() - Date.parse(row.transTime)) > TIME_SLACK_MS)
    return `the time disagrees: the confirmation says ${row.transTime}, the provider ${when.toISOString()}`
  return null
}

/** A result that says the provider has no such transaction (rather than that it could not look). */
const notFound = (r: ProviderResult) =>
  !r.timedOut &&
  r.code !== 0 &&
  /not (be )?found|does not exist|invalid (transaction|receipt)|no such/i.test(r.desc)

/**
 * C2B verification: a confirmation becomes money only when the provider agrees, and what it
 * becomes (the success event) is built here for verified and unverified confirmations alike.
 */
export function createC2bVerifier(deps: PaymentDeps, accounts: Accounts, box: CredentialBox) {
  /**
   * The initiator to query a shortcode's transactions with: its own; the platform's on an
   * aggregator paybill, and on the simulator (a sandbox answers it for any shortcode); else null.
   */
  function initiatorOf(sc: ShortcodeRow): { name: string; credential: string } | null {
    if (sc.initiatorName && sc.securityCredential) {
      const credential = box.open(sc.securityCredential)
      return credential ? { name: sc.initiatorName, credential } : null
    }
    if (sc.mode === 'aggregator' || deps.cfg.usingSimulator)
      return {
        name: deps.cfg.credentials.initiatorName,
        credential: deps.cfg.credentials.securityCredential,
      }
    return null
  }

  /** The transactions.success event of a counted confirmation (in the caller's transaction). */
  function emit(db: Db, row: C2bRow, verified: boolean) {
    const sc = getShortcode(deps.platform(), row.shortcode)
    const aggregator = sc?.mode === 'aggregator'
    const reference = aggregator
      ? accounts.route(row.billRefNumber)?.rest || row.billRefNumber
      : row.billRefNumber
    const till = !aggregator && /goods/i.test(row.transactionType)
    const balance = Number(row.orgAccountBalance)
    const what = till
      ? `Customer payment to till ${row.shortcode}`
      : `Customer payment to paybill ${row.shortcode}${reference ? ` account ${reference}` : ''}`
    emitSuccess(deps, db, {
      tenant: row.tenantId,
      transaction_id: row.transactionId,
      occurred_at: row.transTime,
      amount: row.amountCents / 100,
      direction: 'in',
      counterparty_name: row.payerName,
      counterparty_phone: row.msisdn,
      description: verified ? what : `${what} (unverified)`,
      receipt_number: row.transId,
      // The organisation's balance moves cashflow only when the payment is verified, and only
      // on the tenant's own shortcode (an aggregator paybill's balance is the platform's).
      balance:
        verified && !aggregator && row.orgAccountBalance && Number.isFinite(balance)
          ? balance
          : null,
      source: 'payment',
      channel: 'c2b',
      ...(reference ? { account_reference: reference.slice(0, 40) } : {}),
    })
  }

  /**
   * Moves a `received` confirmation on, with its audit row (and its event when counted), in the
   * caller's transaction; false when it was not `received`.
   */
  function moveIn(
    db: Db,
    m: { tid: string; transId: string; to: C2bRow['status']; reason: string | null },
  ) {
    const { tid, transId, to, reason } = m
    const row = getC2bPayment(db, tid, transId)
    if (row?.status !== 'received') return false
    const at = deps.nowIso()
    db.sqlite.query(MOVE_SQL).run(to, reason, at, row.id)
    appendAudit(db, {
      tenantId: tid,
      entity: 'c2b_payment',
      entityId: row.id,
      action: to === 'received' ? 'checked' : to,
      fromStatus: 'received',
      toStatus: to,
      detail: { trans_id: transId, amount: row.amountCents / 100, reason },
      actor: null,
      at,
    })
    if (to === 'verified' || to === 'unverified')
      emit(db, { ...row, status: to }, to === 'verified')
    return true
  }

  /** Notes on a `received` confirmation why it is not verified yet, in the caller's transaction. */
  const notYetIn = (db: Db, tid: string, transId: string, reason: string) =>
    db.sqlite.query(NOT_YET_SQL).run(`not verified yet: ${reason}`, deps.nowIso(), tid, transId)

  /** Notes why a confirmation is not verified yet (and so when it was last tried). */
  const notYet = (tid: string, transId: string, reason: string) => {
    const db = deps.tenantDb(tid)
    return grouped(db, () => notYetIn(db, tid, transId, reason))
  }

  /** Gives up asking: the confirmation counts as one nobody could check (`unverified`). */
  const giveUp = (tid: string, transId: string, reason: string) => {
    const db = deps.tenantDb(tid)
    return grouped(db, () => moveIn(db, { tid, transId, to: 'unverified', reason }))
  }

  /**
   * The provider's Transaction Status result for a confirmation (provider-requests' hook), applied
   * in the transaction that settles the request: one commit for both.
   */
  function onResult(db: Db, tid: string, request: Record<string, unknown>, r: ProviderResult) {
    const transId = String(request.transaction_id ?? '')
    if (r.code === 0 && !r.timedOut) {
      const row = getC2bPayment(db, tid, transId)
      if (row?.status !== 'received') return
      const why = disagreement(row, r)
      // The provider answers again: an alert about confirmations it could not check is over.
      if (moveIn(db, { tid, transId, to: why ? 'rejected' : 'verified', reason: why }) && !why)
        deps.alerts.clear('c2b_unverified')
    } else if (notFound(r)) {
      moveIn(db, {
        tid,
        transId,
        to: 'rejected',
        reason: `the provider knows no such transaction: ${r.desc}`,
      })
    } else {
      // The provider could not answer (timeout, credentials): the money is not counted yet.
      const why = r.timedOut ? 'the status query timed out' : `${r.rawCode}: ${r.desc}`
      notYetIn(db, tid, transId, why)
    }
  }

  return { initiatorOf, emit, onResult, notYet, giveUp }
}

export type C2bVerifier = ReturnType<typeof createC2bVerifier>
