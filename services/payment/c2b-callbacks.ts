import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { maskPhone } from '../kernel/phone.ts'
import { PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { appendAudit } from './audit.ts'
import type { Accounts } from './c2b-accounts.ts'
import { getShortcode, type ShortcodeRow } from './c2b-shortcodes.ts'
import { type CallbackAuth, InvalidCallback, jsonBody } from './callback-auth.ts'
import { parseDarajaTimestamp } from './daraja.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import { emitSuccess } from './settle.ts'

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

/** Validation and confirmation of customer-initiated payments to registered shortcodes. */
export function createC2bCallbacks(deps: PaymentDeps, auth: CallbackAuth, accounts: Accounts) {
  /** The URL token names the tenant and shortcode; the shortcode must still be that tenant's. */
  function authenticate(
    query: Record<string, string | undefined>,
    ip: string | null,
    raw: unknown,
  ) {
    const { ref } = auth.checkC2bToken(
      query,
      (sc) => getShortcode(deps.platform(), sc)?.tenant_id ?? null,
    )
    auth.checkSource(ip)
    const row = getShortcode(deps.platform(), ref)!
    const body = (jsonBody(raw) ?? {}) as C2bBody
    if (text(body.BusinessShortCode) !== null && text(body.BusinessShortCode) !== row.shortcode)
      throw new InvalidCallback('the callback names another shortcode than its token')
    return { row, body }
  }

  /** Whose payment it is: the holder, or on an aggregator paybill the tenant the account names. */
  function recipient(row: ShortcodeRow, body: C2bBody) {
    if (row.mode !== 'aggregator')
      return { tenantId: row.tenant_id, reference: text(body.BillRefNumber) }
    const routed = accounts.route(text(body.BillRefNumber))
    if (!routed || !deps.ctx.registry.hasProfile(routed.tenantId)) return null
    return { tenantId: routed.tenantId, reference: routed.rest || text(body.BillRefNumber) }
  }

  const writable = (tid: string) => {
    try {
      assertEntitled(deps.ctx.registry, tid, { write: true })
      return true
    } catch (err) {
      if (err instanceof AppError) return false
      throw err
    }
  }

  function c2bValidation(
    query: Record<string, string | undefined>,
    raw: unknown,
    ip: string | null,
  ) {
    const { row, body } = authenticate(query, ip, raw)
    const amount = Number(body.TransAmount)
    if (!Number.isFinite(amount) || amount <= 0) return VALIDATION.invalidAmount
    if (text(body.MSISDN) === null) return VALIDATION.invalidMsisdn
    const to = recipient(row, body)
    if (!to) return VALIDATION.invalidAccount
    if (to.tenantId !== PLATFORM_TENANT && !writable(to.tenantId)) return VALIDATION.otherError
    return VALIDATION.accepted
  }

  /**
   * Records a confirmation once per TransID with its audit row and its success event in one
   * transaction. On an aggregator paybill an account number nobody holds stays with the platform
   * tenant (recorded and audited, no event): the money arrived, and the operator can see it.
   */
  async function c2bConfirmation(
    query: Record<string, string | undefined>,
    raw: unknown,
    ip: string | null,
  ) {
    const { row, body } = authenticate(query, ip, raw)
    const transId = text(body.TransID)
    const amount = Number(body.TransAmount)
    if (!transId || !/^[A-Z0-9]{6,20}$/i.test(transId))
      throw new InvalidCallback('the confirmation names no TransID')
    if (!Number.isFinite(amount) || amount <= 0)
      throw new InvalidCallback('the confirmation has no TransAmount')
    const to = recipient(row, body)
    const tid = to?.tenantId ?? row.tenant_id
    const announce = to !== null && tid !== PLATFORM_TENANT
    const db = deps.tenantDb(tid)
    const at = deps.nowIso()
    const occurredAt = parseDarajaTimestamp(body.TransTime)?.toISOString() ?? at
    const names = [body.FirstName, body.MiddleName, body.LastName].map(text).filter(Boolean)
    const payer = names.length ? names.join(' ') : null
    const msisdn = text(body.MSISDN)
    const phone = msisdn ? maskPhone(msisdn) : null
    const till = row.mode === 'tenant' && /goods/i.test(String(body.TransactionType ?? ''))
    const reference = to?.reference ?? text(body.BillRefNumber)
    const txnId = newId('txn')
    const id = `c2b_${txnId.slice(4)}`
    const cents = Math.round(amount * 100)
    await grouped(db, () => {
      const inserted = db.sqlite
        .query(
          `INSERT OR IGNORE INTO c2b_payments (id, tenant_id, trans_id, shortcode, transaction_type,
            amount_cents, bill_ref_number, invoice_number, msisdn, payer_name, trans_time,
            org_account_balance, third_party_trans_id, transaction_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          tid,
          transId,
          row.shortcode,
          String(body.TransactionType ?? ''),
          cents,
          text(body.BillRefNumber),
          text(body.InvoiceNumber),
          phone,
          payer,
          occurredAt,
          text(body.OrgAccountBalance),
          text(body.ThirdPartyTransID),
          txnId,
          at,
        )
      // The same TransID again (Daraja repeats confirmations): nothing changes.
      if (inserted.changes === 0) return
      appendAudit(db, {
        tenantId: tid,
        entity: 'c2b_payment',
        entityId: id,
        action: 'received',
        fromStatus: null,
        toStatus: announce ? 'success' : 'unrouted',
        detail: {
          trans_id: transId,
          amount: cents / 100,
          shortcode: row.shortcode,
          bill_ref_number: text(body.BillRefNumber),
          phone_number: phone,
        },
        actor: null,
        at,
      })
      if (!announce) return
      const balance = Number(body.OrgAccountBalance)
      emitSuccess(deps, db, {
        tenant: tid,
        transaction_id: txnId,
        occurred_at: occurredAt,
        amount: cents / 100,
        direction: 'in',
        counterparty_name: payer,
        counterparty_phone: phone,
        description: till
          ? `Customer payment to till ${row.shortcode}`
          : `Customer payment to paybill ${row.shortcode}${reference ? ` account ${reference}` : ''}`,
        receipt_number: transId,
        // The organisation's balance is the tenant's own only on its own shortcode.
        balance:
          row.mode === 'tenant' && Number.isFinite(balance) && text(body.OrgAccountBalance)
            ? balance
            : null,
        source: 'payment',
        channel: 'c2b',
        ...(reference ? { account_reference: reference.slice(0, 40) } : {}),
      })
    })
    return ACK
  }

  return { c2bValidation, c2bConfirmation }
}
