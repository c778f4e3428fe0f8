import { topics } from '../../schema/events.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { derivedId } from '../kernel/ids.ts'
import { type CallbackAuth, InvalidCallback, jsonBody } from './callback-auth.ts'
import type { PaymentDeps } from './deps.ts'
import {
  type AskRequest,
  finishRequest,
  getRequestRow,
  type ProviderResult,
  type RequestRow,
  type VerifyHook,
} from './provider-store.ts'
import { emitSuccess } from './settle.ts'

const ACK = { ResultCode: 0, ResultDesc: 'Accepted' }

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

/** A Daraja `Result` read: its code (numeric or not), words and `ResultParameters` by `Key`. */
export function readResult(r: Record<string, unknown>, atTimeoutUrl: boolean): ProviderResult {
  const timedOut = atTimeoutUrl && r.ResultCode === undefined
  const rawCode = String(r.ResultCode ?? '')
  const list = (r.ResultParameters as { ResultParameter?: unknown } | undefined)?.ResultParameter
  return {
    code: /^-?\d+$/.test(rawCode) ? Number(rawCode) : null,
    rawCode,
    desc: String(r.ResultDesc ?? (timedOut ? 'queue timeout' : '')),
    timedOut,
    params: Object.fromEntries(
      (Array.isArray(list) ? list : list ? [list] : []).map(
        (p: { Key?: string; Value?: unknown }) => [String(p?.Key), p?.Value],
      ),
    ),
  }
}

/** The result request the token names, or 401 when the body is about another request. */
function resultFor(deps: PaymentDeps, tid: string, ref: string, raw: unknown) {
  const r = (jsonBody(raw) as { Result?: Record<string, unknown> } | null)?.Result
  const row = getRequestRow(deps, tid, ref)
  if (
    !r ||
    !row ||
    (r.OriginatorConversationID !== undefined && r.OriginatorConversationID !== row.id) ||
    (row.conversationId !== null &&
      r.ConversationID !== undefined &&
      r.ConversationID !== row.conversationId)
  )
    throw new InvalidCallback('the result token does not belong to this request')
  return { r, row }
}

/** What a completed balance or reversal becomes: the balance event, the reversal's transaction. */
function emitCompleted(
  deps: PaymentDeps,
  db: Db,
  done: { tid: string; row: RequestRow; req: AskRequest; result: ProviderResult; receipt: string },
) {
  const { tid, row, req, result } = done
  const at = deps.nowIso()
  if (row.kind === 'balance') {
    const accounts = parseAccountBalance(result.params.AccountBalance)
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
      receipt_number: done.receipt || null,
      balance: null,
      source: 'payment',
      channel: 'reversal',
      ...(req.transaction_id ? { account_reference: req.transaction_id } : {}),
    })
}

/**
 * A result at the ResultURL (QueueTimeOutURL with `timeout=1`): the token names the tenant and
 * the request; the request is settled once, with what it becomes in the same transaction (a
 * balance event, a reversal's transaction, a C2B confirmation verified).
 */
export async function takeResult(
  ctx: { deps: PaymentDeps; auth: CallbackAuth; hooks: { verify?: VerifyHook } },
  input: { query: Record<string, string | undefined>; raw: unknown; ip: string | null },
) {
  const { deps, auth, hooks } = ctx
  const { tid, ref } = auth.checkToken('result', input.query)
  auth.checkSource(input.ip)
  const { r, row } = resultFor(deps, tid, ref, input.raw)
  if (row.status !== 'pending') return ACK
  const result = readResult(r, input.query.timeout === '1')
  const { code, rawCode, desc, timedOut } = result
  const ok = code === 0 && !timedOut
  const req = JSON.parse(row.request) as AskRequest
  const receipt = String(r.TransactionID ?? '')
  await finishRequest(deps, {
    tid,
    id: ref,
    status: timedOut ? 'timeout' : ok ? 'completed' : 'failed',
    code,
    desc: code === null && rawCode ? `${rawCode}: ${desc}` : desc,
    result: { code: rawCode || null, transaction_id: r.TransactionID ?? null, ...result.params },
    emit: (db) => {
      if (row.kind === 'verify') return hooks.verify?.(db, tid, req, result)
      if (ok) emitCompleted(deps, db, { tid, row, req, result, receipt })
    },
  })
  return ACK
}
