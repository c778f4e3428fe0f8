import { topics } from '../../schema/events.ts'
import type { providerRequests } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { AppError, NotFound } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { derivedId, newId } from '../kernel/ids.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { appendAudit } from './audit.ts'
import {
  assertHttpsCallbacks,
  type CallbackAuth,
  InvalidCallback,
  jsonBody,
} from './callback-auth.ts'
import type { AsyncAccepted, AsyncInput } from './daraja-business.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import { mayHaveReached } from './initiate.ts'
import { emitSuccess } from './settle.ts'
import type { Narrow, SqlRow } from './sql-row.ts'

export type RequestKind = 'status' | 'balance' | 'reversal'
/** A Transaction Status asked by the platform itself, to verify a C2B confirmation. */
type AnyKind = RequestKind | 'verify'

/** The result of a request, as the provider sent it. */
export interface ProviderResult {
  /** null: the queue timed out, or the code is not a number (`rawCode` says it). */
  code: number | null
  rawCode: string
  desc: string
  timedOut: boolean
  params: Record<string, unknown>
}

/** What a `verify` request's result is handed to (c2b-verify.ts), in the settling transaction. */
export type VerifyHook = (
  db: Db,
  tid: string,
  request: Record<string, unknown>,
  result: ProviderResult,
) => void

type RequestRow = Narrow<
  SqlRow<typeof providerRequests>,
  { kind: AnyKind; status: 'pending' | 'completed' | 'failed' | 'timeout' }
>

/** What a request asks about: a receipt (status, reversal) or a shortcode (balance). */
type AskRequest = {
  transaction_id: string | null
  shortcode: string
  amount: number | null
} & Record<string, unknown>

interface AskOptions {
  actorId: string | null
  remarks: string
  initiator?: AsyncInput['initiator']
}

export interface ProviderRequestBody {
  tenant_id?: string | undefined
  transaction_id?: string | undefined
  shortcode?: string | undefined
  amount?: number | undefined
  remarks?: string | undefined
}

const ACK = { ResultCode: 0, ResultDesc: 'Accepted' }
const ENTITY = 'provider_request' as const

/** `name|currency|available|current|reserved|uncleared&…` → accounts. */
export function parseAccountBalance(value: unknown) {
  return String(value ?? '')
    .split('&')
    .map((part) => part.split('|'))
    .filter((f) => f.length >= 3)
    .map(([name, currency, available, current, reserved, uncleared]) => ({
      name: name!.trim(),
      currency: currency!.trim() || 'KES',
      available: Number(available) || 0,
      current: Number(current) || 0,
      reserved: Number(reserved) || 0,
      uncleared: Number(uncleared) || 0,
    }))
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
    conversation_id: r.conversation_id,
    result_code: r.result_code,
    result_desc: r.result_desc,
    request: JSON.parse(r.request) as Record<string, unknown>,
    result: r.result ? (JSON.parse(r.result) as Record<string, unknown>) : null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  })

  const getRow = (tid: string, id: string) =>
    deps
      .tenantDb(tid)
      .sqlite.query<RequestRow, [string, string]>(
        'SELECT * FROM provider_requests WHERE tenant_id = ? AND id = ?',
      )
      .get(tid, id)

  /** The shortcode a receipt of the tenant's was paid to or from, or null when it is not its. */
  function shortcodeOfReceipt(tid: string, receipt: string): string | null {
    const db = deps.tenantDb(tid).sqlite
    const c2b = db
      .query<{ shortcode: string }, [string, string]>(
        'SELECT shortcode FROM c2b_payments WHERE tenant_id = ? AND trans_id = ?',
      )
      .get(tid, receipt)
    if (c2b) return c2b.shortcode
    const own = db
      .query<{ n: number }, [string, string, string, string]>(
        `SELECT 1 AS n FROM payments WHERE tenant_id = ? AND mpesa_receipt_number = ?
         UNION ALL SELECT 1 FROM disbursements WHERE tenant_id = ? AND transaction_receipt = ?`,
      )
      .get(tid, receipt, tid, receipt)
    return own ? deps.cfg.credentials.shortcode : null
  }

  function holds(actor: Actor, tid: string, shortcode: string, ownReceipt: boolean): boolean {
    if (isOperator(actor)) return true
    // The tenant's own STK payments and disbursements went through the platform's shortcode.
    if (ownReceipt && shortcode === deps.cfg.credentials.shortcode) return true
    return !!deps
      .platform()
      .sqlite.query<{ n: number }, [string, string]>(
        "SELECT 1 AS n FROM c2b_shortcodes WHERE shortcode = ? AND tenant_id = ? AND status = 'registered'",
      )
      .get(shortcode, tid)
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

  /** Records a request (its row and audit row) in the caller's transaction; returns its id. */
  function recordIn(
    db: Db,
    tid: string,
    kind: AnyKind,
    request: AskRequest,
    actorId: string | null,
  ) {
    const id = newId('req')
    const at = deps.nowIso()
    db.sqlite
      .query(
        `INSERT INTO provider_requests (id, tenant_id, kind, status, request, user_id, created_at, updated_at)
         VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
      )
      .run(id, tid, kind, JSON.stringify(request), actorId, at, at)
    appendAudit(db, {
      tenantId: tid,
      entity: ENTITY,
      entityId: id,
      action: 'created',
      fromStatus: null,
      toStatus: 'pending',
      detail: { kind, ...request },
      actor: actorId,
      at,
    })
    return id
  }

  /**
   * Asks the provider about a recorded request. One the provider may have received stays pending
   * (its result may still come); one it certainly did not is failed and its error thrown as 502.
   */
  async function send(
    tid: string,
    id: string,
    kind: AnyKind,
    request: AskRequest,
    opts: AskOptions,
  ): Promise<RequestRow> {
    const db = deps.tenantDb(tid)
    const input: AsyncInput = {
      originatorConversationId: id,
      shortcode: request.shortcode,
      identifierType: kind === 'reversal' ? '11' : '4',
      remarks: opts.remarks,
      resultUrl: auth.resultUrl(tid, id),
      timeoutUrl: auth.resultUrl(tid, id, true),
      ...(opts.initiator ? { initiator: opts.initiator } : {}),
    }
    const receipt = request.transaction_id ?? ''
    let accepted: AsyncAccepted
    try {
      assertHttpsCallbacks(deps.cfg)
      accepted =
        kind === 'status' || kind === 'verify'
          ? await deps.business.transactionStatus({ ...input, transactionId: receipt })
          : kind === 'balance'
            ? await deps.business.accountBalance(input)
            : await deps.business.reversal({
                ...input,
                transactionId: receipt,
                amount: request.amount!,
              })
    } catch (err) {
      if (err instanceof AppError) {
        await finish(tid, id, 'failed', null, err.message, null)
        throw err
      }
      if (mayHaveReached(err)) return getRow(tid, id)!
      await finish(tid, id, 'failed', null, (err as Error).message, null)
      throw new AppError(
        'BAD_GATEWAY',
        `the payment provider did not accept the request: ${(err as Error).message}`,
      )
    }
    // Group-committed: a synchronous commit here blocked the event loop for one fsync per request.
    await grouped(db, () =>
      db.sqlite
        .query('UPDATE provider_requests SET conversation_id = ?, updated_at = ? WHERE id = ?')
        .run(accepted.ConversationID, deps.nowIso(), id),
    )
    return getRow(tid, id)!
  }

  /** Records a request (row and audit in one commit), then asks the provider (`send`). */
  async function ask(tid: string, kind: AnyKind, request: AskRequest, opts: AskOptions) {
    assertHttpsCallbacks(deps.cfg)
    const db = deps.tenantDb(tid)
    const id = await grouped(db, () => recordIn(db, tid, kind, request, opts.actorId))
    return send(tid, id, kind, request, opts)
  }

  /** Moves a pending request to its end with its audit row (and its events); false if it was not pending. */
  function finish(
    tid: string,
    id: string,
    status: RequestRow['status'],
    code: number | null,
    desc: string,
    result: Record<string, unknown> | null,
    emit?: () => void,
  ) {
    const db = deps.tenantDb(tid)
    return grouped(db, () => {
      const at = deps.nowIso()
      const changed = db.sqlite
        .query(
          `UPDATE provider_requests SET status = ?, result_code = ?, result_desc = ?, result = ?, updated_at = ?
           WHERE id = ? AND status = 'pending'`,
        )
        .run(status, code, desc, result ? JSON.stringify(result) : null, at, id).changes
      if (!changed) return false
      appendAudit(db, {
        tenantId: tid,
        entity: ENTITY,
        entityId: id,
        action: 'settled',
        fromStatus: 'pending',
        toStatus: status,
        detail: { result_code: code, result_desc: desc },
        actor: null,
        at,
      })
      emit?.()
      return true
    })
  }

  async function result(
    query: Record<string, string | undefined>,
    raw: unknown,
    ip: string | null,
  ) {
    const { tid, ref } = auth.checkToken('result', query)
    auth.checkSource(ip)
    const r = (jsonBody(raw) as { Result?: Record<string, unknown> } | null)?.Result
    const row = getRow(tid, ref)
    if (
      !r ||
      !row ||
      (r.OriginatorConversationID !== undefined && r.OriginatorConversationID !== row.id) ||
      (row.conversation_id !== null &&
        r.ConversationID !== undefined &&
        r.ConversationID !== row.conversation_id)
    )
      throw new InvalidCallback('the result token does not belong to this request')
    if (row.status !== 'pending') return ACK
    const timedOut = query.timeout === '1' && r.ResultCode === undefined
    const rawCode = String(r.ResultCode ?? '')
    const code = /^-?\d+$/.test(rawCode) ? Number(rawCode) : null
    const desc = String(r.ResultDesc ?? (timedOut ? 'queue timeout' : ''))
    const list = (r.ResultParameters as { ResultParameter?: unknown } | undefined)?.ResultParameter
    const params = Object.fromEntries(
      (Array.isArray(list) ? list : list ? [list] : []).map(
        (p: { Key?: string; Value?: unknown }) => [String(p?.Key), p?.Value],
      ),
    )
    const ok = code === 0 && !timedOut
    const status = timedOut ? 'timeout' : ok ? 'completed' : 'failed'
    const req = JSON.parse(row.request) as {
      transaction_id: string | null
      shortcode: string
      amount: number | null
    } & Record<string, unknown>
    const db = deps.tenantDb(tid)
    const at = deps.nowIso()
    await finish(
      tid,
      ref,
      status,
      code,
      code === null && rawCode ? `${rawCode}: ${desc}` : desc,
      { code: rawCode || null, transaction_id: r.TransactionID ?? null, ...params },
      () => {
        if (row.kind === 'verify')
          return hooks.verify?.(db, tid, req, { code, rawCode, desc, timedOut, params })
        if (!ok) return
        if (row.kind === 'balance') {
          const accounts = parseAccountBalance(params.AccountBalance)
          const main =
            accounts.find((a) => /working/i.test(a.name)) ??
            accounts.find((a) => /utility/i.test(a.name)) ??
            accounts[0]
          if (main)
            emitEvent(
              db,
              {
                topic: topics.balanceReported,
                tenantId: tid,
                data: {
                  shortcode: req.shortcode,
                  balance: main.available,
                  currency: main.currency,
                  reported_at: at,
                  accounts,
                },
              },
              deps.ctx.clock,
            )
        }
        if (row.kind === 'reversal' && req.amount)
          emitSuccess(deps, db, {
            tenant: tid,
            // Derived from the request: a restored platform settling it again names the same one.
            transaction_id: derivedId('txn', row.id),
            occurred_at: at,
            amount: req.amount,
            direction: 'out',
            counterparty_name: null,
            counterparty_phone: null,
            description: `M-Pesa reversal of ${req.transaction_id}`,
            receipt_number: String(r.TransactionID ?? '') || null,
            balance: null,
            source: 'payment',
            channel: 'reversal',
            ...(req.transaction_id ? { account_reference: req.transaction_id } : {}),
          })
      },
    )
    return ACK
  }

  function read(actor: Actor, kind: RequestKind, id: string) {
    const row = getRow(actor.tenantId, id)
    if (!row || row.kind !== kind) throw new NotFound('request', id)
    return view(row)
  }

  return { start, ask, recordIn, send, result, read }
}
export type ProviderRequests = ReturnType<typeof createProviderRequests>
