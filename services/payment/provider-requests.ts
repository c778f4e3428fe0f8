import { and, eq } from 'drizzle-orm'
import { c2bPayments, c2bShortcodes, disbursements, payments } from '../../schema/payment/tables.ts'
import { AppError, NotFound } from '../kernel/errors.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { assertHttpsCallbacks, type CallbackAuth } from './callback-auth.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import { takeResult } from './provider-results.ts'
import {
  type AnyKind,
  type AskedRequest,
  type AskOptions,
  type AskRequest,
  getRequestRow,
  type RequestKind,
  type RequestRecord,
  type RequestRow,
  recordRequest,
  sendRequest,
  type VerifyHook,
} from './provider-store.ts'

export interface ProviderRequestBody {
  tenant_id?: string | undefined
  transaction_id?: string | undefined
  shortcode?: string | undefined
  amount?: number | undefined
  remarks?: string | undefined
}

/**
 * Transaction Status, Account Balance and Reversal: asked of the provider now, answered later at
 * a ResultURL whose token is bound to the tenant and our request id. A tenant asks only about its
 * own transactions (found by receipt among its payments, disbursements and C2B payments) and its
 * own shortcodes; the operator about any.
 */
export function createProviderRequests(
  deps: PaymentDeps,
  auth: CallbackAuth,
  hooks: { verify?: VerifyHook } = {},
) {
  const view = (r: RequestRow) => ({
    id: r.id,
    kind: r.kind,
    status: r.status,
    conversation_id: r.conversationId,
    result_code: r.resultCode,
    result_desc: r.resultDesc,
    request: JSON.parse(r.request) as Record<string, unknown>,
    result: r.result ? (JSON.parse(r.result) as Record<string, unknown>) : null,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  })

  const getRow = (tid: string, id: string) => getRequestRow(deps, tid, id)

  /** The shortcode a receipt of the tenant's was paid to or from, or null when it is not its. */
  function shortcodeOfReceipt(tid: string, receipt: string): string | null {
    const { orm } = deps.tenantDb(tid)
    const c = c2bPayments
    const c2b = orm
      .select({ shortcode: c.shortcode })
      .from(c)
      .where(and(eq(c.tenantId, tid), eq(c.transId, receipt)))
      .get()
    if (c2b) return c2b.shortcode
    const p = payments
    const d = disbursements
    const own =
      orm
        .select({ id: p.id })
        .from(p)
        .where(and(eq(p.tenantId, tid), eq(p.mpesaReceiptNumber, receipt)))
        .limit(1)
        .get() ??
      orm
        .select({ id: d.id })
        .from(d)
        .where(and(eq(d.tenantId, tid), eq(d.transactionReceipt, receipt)))
        .limit(1)
        .get()
    return own ? deps.cfg.credentials.shortcode : null
  }

  function holds(actor: Actor, tid: string, shortcode: string, ownReceipt: boolean): boolean {
    if (isOperator(actor)) return true
    // The tenant's own STK payments and disbursements went through the platform's shortcode.
    if (ownReceipt && shortcode === deps.cfg.credentials.shortcode) return true
    const s = c2bShortcodes
    return !!deps
      .platform()
      .orm.select({ shortcode: s.shortcode })
      .from(s)
      .where(and(eq(s.shortcode, shortcode), eq(s.tenantId, tid), eq(s.status, 'registered')))
      .get()
  }

  async function start(actor: Actor, kind: RequestKind, body: ProviderRequestBody) {
    const tid = tenantFor(actor, body.tenant_id)
    const receipt = body.transaction_id?.trim().toUpperCase()
    let shortcode = body.shortcode?.trim()
    let paidTo: string | null = null
    if (kind !== 'balance') {
      if (!receipt)
        throw new AppError('VALIDATION_FAILED', 'transaction_id: required', {
          errors: [{ field: 'transaction_id', message: 'required' }],
        })
      paidTo = shortcodeOfReceipt(tid, receipt)
      if (!paidTo && !isOperator(actor)) throw new NotFound('transaction', receipt)
      shortcode ??= paidTo ?? deps.cfg.credentials.shortcode
    }
    shortcode ??= isOperator(actor) ? deps.cfg.credentials.shortcode : undefined
    if (!shortcode || !holds(actor, tid, shortcode, paidTo === shortcode))
      throw new NotFound('shortcode', shortcode ?? '(none given)')
    if (kind === 'reversal' && !(Number.isInteger(body.amount) && body.amount! >= 1))
      throw new AppError('VALIDATION_FAILED', 'amount: must be a whole number of shillings', {
        errors: [{ field: 'amount', message: 'must be a whole number of shillings, at least 1' }],
      })
    const request = { transaction_id: receipt ?? null, shortcode, amount: body.amount ?? null }
    return view(
      await ask(tid, kind, request, {
        actorId: actor.userId,
        remarks: body.remarks?.slice(0, 100) || `${kind} request`,
      }),
    )
  }

  /** Records a request (row and audit in one commit), then asks the provider (`send`). */
  async function ask(tid: string, kind: AnyKind, request: AskRequest, opts: AskOptions) {
    assertHttpsCallbacks(deps.cfg)
    const db = deps.tenantDb(tid)
    const id = await grouped(db, () =>
      recordRequest(deps, { db, tid, kind, request, actorId: opts.actorId }),
    )
    return sendRequest({ deps, auth }, { tid, id, kind, request, opts })
  }

  /** A result at the ResultURL (provider-results.ts). */
  const result = (query: Record<string, string | undefined>, raw: unknown, ip: string | null) =>
    takeResult({ deps, auth, hooks }, { query, raw, ip })

  function read(actor: Actor, kind: RequestKind, id: string) {
    const row = getRow(actor.tenantId, id)
    if (!row || row.kind !== kind) throw new NotFound('request', id)
    return view(row)
  }

  return {
    start,
    ask,
    /** Records a request in the caller's transaction (provider-store.ts); returns its id. */
    recordIn: (input: RequestRecord) => recordRequest(deps, input),
    send: (asked: AskedRequest) => sendRequest({ deps, auth }, asked),
    result,
    read,
  }
}
export type ProviderRequests = ReturnType<typeof createProviderRequests>
