import { payments } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { createLostDisbursements } from './b2c-lost.ts'
import { takeB2cResult } from './b2c-result.ts'
import { type CallbackAuth, InvalidCallback, jsonBody } from './callback-auth.ts'
import { parseDarajaTimestamp } from './daraja.ts'
import type { PaymentDeps } from './deps.ts'
import { answerLost, awaitCall, bindLost } from './lost-answer.ts'
import type { ProviderIndex } from './provider-index.ts'
import { getPayment, OPEN, type PaymentRow } from './rows.ts'
import { type Outcome, settle } from './settle.ts'

const ACK = { ResultCode: 0, ResultDesc: 'Accepted' }

/** A callback's body, kept once while its query is pending (a callback path: names from the table). */
const P = sqlNames(payments)
const KEEP_BODY_SQL = `UPDATE ${P.$} SET ${P.callbackBody} = ?, ${P.callbackAt} = ?
  WHERE ${P.id} = ? AND ${P.callbackBody} IS NULL`

type SuccessMeta = Pick<Outcome, 'receipt' | 'transactionDate' | 'counterpartyName'>

/** STK callback metadata items, read by `Name`, never by position (DESIGN §8). */
export function metaOf(items: unknown): SuccessMeta {
  const list = Array.isArray(items) ? (items as Array<{ Name?: unknown; Value?: unknown }>) : []
  const get = (name: string) => list.find((i) => i && i.Name === name)?.Value
  const receipt = get('MpesaReceiptNumber')
  const date = parseDarajaTimestamp(get('TransactionDate'))
  const names = ['FirstName', 'MiddleName', 'LastName']
    .map((n) => get(n))
    .filter((v) => typeof v === 'string' && v)
  return {
    receipt: receipt === undefined || receipt === null ? null : String(receipt),
    transactionDate: date ? date.toISOString() : null,
    counterpartyName: names.length ? names.join(' ') : null,
  }
}

/** An STK callback as it arrived: its URL query, body, source address and signature header. */
interface StkCallbackRequest {
  query: Record<string, string | undefined>
  raw: unknown
  sourceIp: string | null
  requestId?: string | undefined
  bodySignature?: string | null | undefined
}

const NO_META: SuccessMeta = { receipt: null, transactionDate: null, counterpartyName: null }

/** The provider's callbacks and results: authenticate, bind a lost answer, settle. */
export function createCallbacks(deps: PaymentDeps, auth: CallbackAuth, index: ProviderIndex) {
  const awaitInitiated = (ref: string) => awaitCall(deps, ref)
  const unanswered = (status: string, providerId: string | null, ref: string) =>
    answerLost(deps, { status, providerId, ref })

  /** Asks the provider for the final result; settles when there is one. */
  async function confirmByQuery(
    db: Db,
    p: PaymentRow,
    meta: SuccessMeta | null,
    via: string,
  ): Promise<'settled' | 'pending'> {
    if (!p.checkoutRequestId) return 'pending'
    const r = await deps.provider.stkQuery(p.checkoutRequestId)
    if (r.state === 'processing') return 'pending'
    const m = r.resultCode === 0 ? (meta ?? NO_META) : NO_META
    await settle(
      deps,
      { db, kind: 'stk', tid: p.tenantId, id: p.id },
      {
        code: r.resultCode,
        desc: r.resultDesc,
        ...m,
        via,
      },
    )
    return 'settled'
  }

  /** Settles a payment from an STK query (a callback that said nothing); ACKs either way. */
  async function settleByQuery(q: {
    db: Db
    tid: string
    ref: string
    via: string
    requestId?: string | undefined
  }) {
    const { db, tid, ref, via, requestId } = q
    await awaitInitiated(ref)
    const p = getPayment(db, tid, ref)
    if (p && OPEN.has(p.status) && p.checkoutRequestId)
      await confirmByQuery(db, p, null, via).catch((err) =>
        deps.ctx.log.warn('could not query a payment after an empty callback', {
          request_id: requestId,
          payment: p.id,
          error: (err as Error).message,
        }),
      )
    return ACK
  }

  async function stkCallback(c: StkCallbackRequest) {
    const { query, raw, sourceIp, requestId, bodySignature } = c
    const { tid, ref } = auth.checkToken('stk', query)
    auth.checkSource(sourceIp)
    const signed = auth.checkBodySignature(raw, bodySignature)
    const body = typeof raw === 'string' && raw.trim() === '' ? null : jsonBody(raw)
    const cb = (body as { Body?: { stkCallback?: Record<string, unknown> } } | null)?.Body
      ?.stkCallback
    const db = deps.tenantDb(tid)
    // An empty callback (seen from production): taken, and the provider is asked instead.
    if (!cb) return settleByQuery({ db, tid, ref, via: 'empty callback+query', requestId })
    const checkoutId = cb.CheckoutRequestID
    if (typeof checkoutId !== 'string')
      throw new InvalidCallback('the callback names no CheckoutRequestID')
    await awaitInitiated(ref)
    let p = getPayment(db, tid, ref)
    if (p && unanswered(p.status, p.checkoutRequestId, ref)) {
      await bindLost(
        { deps, index },
        {
          db,
          kind: 'stk',
          tid,
          ref,
          ids: { providerId: checkoutId, merchantId: String(cb.MerchantRequestID ?? '') },
        },
      )
      p = getPayment(db, tid, ref)
    }
    if (!p || p.checkoutRequestId !== checkoutId)
      throw new InvalidCallback('the callback token does not belong to this checkout request')
    const code = Number(cb.ResultCode)
    if (!Number.isInteger(code)) throw new InvalidCallback('the callback has no ResultCode')
    const desc = String(cb.ResultDesc ?? '')
    if (!OPEN.has(p.status)) return ACK
    if (code !== 0) {
      await settle(
        deps,
        { db, kind: 'stk', tid, id: p.id },
        { code, desc, ...NO_META, via: 'callback' },
      )
      if (code === 2028)
        deps.alerts.raise(
          'provider_setup',
          `M-Pesa refused a push with result 2028 (${desc}): the shortcode or its transaction type is not set up for STK push; check mpesa.shortcode`,
        )
      return ACK
    }
    // A success: count the money only once the provider confirms it (Daraja does not sign its
    // callbacks). When it cannot confirm yet, keep what the callback said for reconciliation.
    const meta = metaOf((cb.CallbackMetadata as { Item?: unknown } | undefined)?.Item)
    if (signed) {
      await settle(
        deps,
        { db, kind: 'stk', tid, id: p.id },
        { code: 0, desc, ...meta, via: 'signed callback' },
      )
      return ACK
    }
    let outcome: 'settled' | 'pending' = 'pending'
    try {
      outcome = await confirmByQuery(db, p, meta, 'callback+query')
    } catch (err) {
      deps.ctx.log.warn('could not confirm a payment callback; reconciliation will', {
        request_id: requestId,
        payment: p.id,
        error: (err as Error).message,
      })
    }
    if (outcome === 'pending')
      db.write(() => db.sqlite.query(KEEP_BODY_SQL).run(JSON.stringify(body), deps.nowIso(), p.id))
    return ACK
  }

  const b2cResult = (query: Record<string, string | undefined>, raw: unknown, ip: string | null) =>
    takeB2cResult({ deps, auth, index }, { query, raw, ip })

  const lostDisbursements = createLostDisbursements(deps, (tid, ref, extra) =>
    auth.callbackUrl('b2c', tid, ref, extra),
  )

  return { stkCallback, b2cResult, confirmByQuery, askLostDisbursements: lostDisbursements.ask }
}
