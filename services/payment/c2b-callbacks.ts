import { c2bPayments } from '../../schema/payment/tables.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError } from '../kernel/errors.ts'
import { derivedId } from '../kernel/ids.ts'
import { maskPhone } from '../kernel/phone.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import type { Accounts } from './c2b-accounts.ts'
import { getShortcode, type ShortcodeRow, verificationOf } from './c2b-shortcode-store.ts'
import type { C2bRow, C2bVerifier } from './c2b-verify.ts'
import { type C2bUrlKind, type CallbackAuth, InvalidCallback, jsonBody } from './callback-auth.ts'
import { parseDarajaTimestamp } from './daraja.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import type { ProviderRequests } from './provider-requests.ts'
import { insertValues } from './sql-row.ts'

/**
 * Daraja's C2B validation answers: "0" accepts; the documented C2B codes reject (C2B00011 invalid
 * MSISDN, C2B00012 invalid account number, C2B00013 invalid amount, C2B00014 invalid KYC details,
 * C2B00015 invalid shortcode, C2B00016 other error).
 */
export const VALIDATION = {
  accepted: { ResultCode: '0', ResultDesc: 'Accepted' },
  invalidMsisdn: { ResultCode: 'C2B00011', ResultDesc: 'Rejected' },
  invalidAccount: { ResultCode: 'C2B00012', ResultDesc: 'Rejected' },
  invalidAmount: { ResultCode: 'C2B00013', ResultDesc: 'Rejected' },
  invalidShortcode: { ResultCode: 'C2B00015', ResultDesc: 'Rejected' },
  otherError: { ResultCode: 'C2B00016', ResultDesc: 'Rejected' },
} as const

const ACK = { ResultCode: 0, ResultDesc: 'Accepted' }

/** A C2B validation or confirmation body (Daraja's C2B v2 fields). */
interface C2bBody {
  TransactionType?: unknown
  TransID?: unknown
  TransTime?: unknown
  TransAmount?: unknown
  BusinessShortCode?: unknown
  BillRefNumber?: unknown
  InvoiceNumber?: unknown
  OrgAccountBalance?: unknown
  ThirdPartyTransID?: unknown
  MSISDN?: unknown
  FirstName?: unknown
  MiddleName?: unknown
  LastName?: unknown
}

const text = (v: unknown): string | null =>
  v === undefined || v === null || String(v).trim() === '' ? null : String(v).trim()

const DAY_MS = 24 * 3600_000

/** Daraja's TransAmount: whole shillings 1 to 250,000 (`"10"`, `"10.00"`); null otherwise. */
export function c2bAmount(v: unknown): number | null {
  const s = text(v)
  if (!s || !/^\d{1,6}(\.0{1,2})?$/.test(s)) return null
  const n = Number(s)
  return n >= 1 && n <= 250_000 ? n : null
}

/** Daraja's TransTime (Nairobi time) within a day of `now`; null otherwise. */
export function c2bTime(v: unknown, nowMs: number): Date | null {
  const d = parseDarajaTimestamp(text(v))
  return d && Math.abs(d.getTime() - nowMs) <= DAY_MS ? d : null
}

const outOfRange = (field: string, message: string) =>
  new AppError('C2B_OUT_OF_RANGE', `${field}: ${message}`, { errors: [{ field, message }] })

/** A confirmation's TransID, amount and time, as Daraja sends them; 401 or 422 otherwise. */
function checkConfirmation(body: C2bBody, nowMs: number) {
  const transId = text(body.TransID)
  if (!transId || !/^[A-Z0-9]{6,20}$/i.test(transId))
    throw new InvalidCallback('the confirmation names no TransID')
  const amount = c2bAmount(body.TransAmount)
  if (amount === null) throw outOfRange('TransAmount', 'must be whole shillings from 1 to 250,000')
  const occurred = c2bTime(body.TransTime, nowMs)
  if (!occurred) throw outOfRange('TransTime', 'must be a YYYYMMDDHHmmss time within a day of now')
  return { transId, amount, occurred }
}

/** The row a confirmation is stored as: the payer's phone masked, its transaction id derived. */
function c2bRowOf(
  body: C2bBody,
  c: {
    tid: string
    shortcode: string
    transId: string
    amount: number
    occurred: Date
    status: C2bRow['status']
    at: string
  },
): C2bRow {
  const names = [body.FirstName, body.MiddleName, body.LastName].map(text).filter(Boolean)
  const msisdn = text(body.MSISDN)
  const balance = text(body.OrgAccountBalance)
  // Derived from the receipt: a replayed or restored confirmation names the same transaction.
  const txnId = derivedId('txn', 'c2b', c.transId)
  return {
    id: `c2b_${txnId.slice(4)}`,
    tenantId: c.tid,
    transId: c.transId,
    shortcode: c.shortcode,
    transactionType: String(body.TransactionType ?? ''),
    amountCents: c.amount * 100,
    billRefNumber: text(body.BillRefNumber),
    invoiceNumber: text(body.InvoiceNumber),
    msisdn: msisdn ? maskPhone(msisdn) : null,
    payerName: names.length ? names.join(' ') : null,
    transTime: c.occurred.toISOString(),
    orgAccountBalance: /^-?\d{1,12}(\.\d{1,2})?$/.test(balance ?? '') ? balance : null,
    thirdPartyTransId: text(body.ThirdPartyTransID),
    transactionId: txnId,
    createdAt: c.at,
    status: c.status,
    statusReason:
      c.status === 'unverified' ? 'the shortcode has no initiator to verify with' : null,
    updatedAt: c.at,
  }
}

/** Whether the tenant may take a payment now (entitled to write: not suspended, within its plan). */
function writable(deps: PaymentDeps, tid: string): boolean {
  try {
    assertEntitled(deps.ctx.registry, tid, { write: true })
    return true
  } catch (err) {
    if (err instanceof AppError) return false
    throw err
  }
}

/** Validation and confirmation of customer-initiated payments to registered shortcodes. */
export function createC2bCallbacks(parts: {
  deps: PaymentDeps
  auth: CallbackAuth
  accounts: Accounts
  verifier: C2bVerifier
  requests: Pick<ProviderRequests, 'recordIn' | 'send'>
}) {
  const { deps, auth, accounts, verifier, requests } = parts
  /**
   * The URL token (its own for each URL) names the tenant and shortcode; the shortcode must still
   * be that tenant's. Confirmations to a shortcode nobody can query must come from the provider.
   */
  function authenticate(
    which: C2bUrlKind,
    query: Record<string, string | undefined>,
    ip: string | null,
    raw: unknown,
  ) {
    const { holder: row } = auth.checkC2bToken(which, query, (sc) => {
      const held = getShortcode(deps.platform(), sc)
      return held ? { tid: held.tenantId, nonce: held.tokenNonce, holder: held } : null
    })
    auth.checkSource(ip)
    if (which === 'confirmation' && verificationOf(row, deps.cfg.usingSimulator) === 'source')
      auth.checkC2bSource(ip)
    const body = (jsonBody(raw) ?? {}) as C2bBody
    if (text(body.BusinessShortCode) !== null && text(body.BusinessShortCode) !== row.shortcode)
      throw new InvalidCallback('the callback names another shortcode than its token')
    return { row, body }
  }

  /** Whose payment it is: the holder, or on an aggregator paybill the tenant the account names. */
  function recipient(row: ShortcodeRow, body: C2bBody) {
    if (row.mode !== 'aggregator')
      return { tenantId: row.tenantId, reference: text(body.BillRefNumber) }
    const routed = accounts.route(text(body.BillRefNumber))
    if (!routed || !deps.ctx.registry.hasProfile(routed.tenantId)) return null
    return { tenantId: routed.tenantId, reference: routed.rest || text(body.BillRefNumber) }
  }

  function c2bValidation(
    query: Record<string, string | undefined>,
    raw: unknown,
    ip: string | null,
  ) {
    const { row, body } = authenticate('validation', query, ip, raw)
    if (c2bAmount(body.TransAmount) === null) return VALIDATION.invalidAmount
    if (text(body.MSISDN) === null) return VALIDATION.invalidMsisdn
    const to = recipient(row, body)
    if (!to) return VALIDATION.invalidAccount
    if (to.tenantId !== PLATFORM_TENANT && !writable(deps, to.tenantId))
      return VALIDATION.otherError
    return VALIDATION.accepted
  }

  /**
   * Records a confirmation once per TransID with its audit row, and answers at once. Nothing in
   * it can be trusted (Daraja signs nothing): on a shortcode with an initiator it is `received`
   * and counted only when the provider's Transaction Status agrees (c2b-verify.ts); without one
   * it came from the provider's address and is counted `unverified`. On an aggregator paybill an
   * account number nobody holds stays with the platform tenant, `unrouted` (recorded and audited,
   * no event): the money arrived, and the operator can see it.
   */
  async function c2bConfirmation(
    query: Record<string, string | undefined>,
    raw: unknown,
    ip: string | null,
  ) {
    const { row, body } = authenticate('confirmation', query, ip, raw)
    const { transId, amount, occurred } = checkConfirmation(body, deps.ctx.clock.nowMs())
    const to = recipient(row, body)
    const tid = to?.tenantId ?? row.tenantId
    const routed = to !== null && tid !== PLATFORM_TENANT
    const initiator = verifier.initiatorOf(row)
    const status: C2bRow['status'] = !routed ? 'unrouted' : initiator ? 'received' : 'unverified'
    const db = deps.tenantDb(tid)
    const at = deps.nowIso()
    const c2b = c2bRowOf(body, {
      tid,
      shortcode: row.shortcode,
      transId,
      amount,
      occurred,
      status,
      at,
    })
    const verify = {
      transaction_id: transId,
      shortcode: row.shortcode,
      amount: null,
      c2b_id: c2b.id,
    }
    const verifyId = await grouped(db, () => {
      // The same TransID again (Daraja repeats it): OR IGNORE, by the tenant + trans_id index.
      if (!insertValues(db, c2bPayments, c2b, { orIgnore: true })) return null
      appendAudit(db, {
        tenantId: tid,
        entity: 'c2b_payment',
        entityId: c2b.id,
        action: 'received',
        fromStatus: null,
        toStatus: status,
        detail: {
          trans_id: transId,
          amount,
          shortcode: row.shortcode,
          bill_ref_number: c2b.billRefNumber,
          phone_number: c2b.msisdn,
        },
        actor: null,
        at,
      })
      if (status === 'unverified') verifier.emit(db, c2b, false)
      // Its status query is recorded in the same commit, and asked after it.
      return status === 'received' && initiator
        ? requests.recordIn({ db, tid, kind: 'verify', request: verify, actorId: null })
        : null
    })
    if (verifyId && initiator)
      // A provider that cannot be reached leaves it `received` (asked again: c2b-requery.ts).
      void requests
        .send({
          tid,
          id: verifyId,
          kind: 'verify',
          request: verify,
          opts: { actorId: null, remarks: 'C2B confirmation check', initiator },
        })
        .catch((err) => {
          deps.ctx.log.warn('the C2B confirmation could not be verified yet', {
            tenant_id: tid,
            trans_id: transId,
            error: (err as Error).message,
          })
          // Asked again later (c2b-requery.ts).
          return verifier.notYet(tid, transId, (err as Error).message)
        })
    return ACK
  }

  return { c2bValidation, c2bConfirmation }
}
