import { providerRequests } from '../../schema/payment/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { AppError } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { appendAudit } from './audit.ts'
import { assertHttpsCallbacks, type CallbackAuth } from './callback-auth.ts'
import type { AsyncAccepted, AsyncInput } from './daraja-business.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import { mayHaveReached } from './initiate.ts'
import { insertValues, type Narrow, selectAll } from './sql-row.ts'

/**
 * Requests answered later at a ResultURL (Transaction Status, Account Balance, Reversal, and the
 * platform's own C2B verification queries): recorded, sent, and settled once.
 */

export type RequestKind = 'status' | 'balance' | 'reversal'
/** A Transaction Status asked by the platform itself, to verify a C2B confirmation. */
export type AnyKind = RequestKind | 'verify'

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

export type RequestRow = Narrow<
  typeof providerRequests.$inferSelect,
  { kind: AnyKind; status: 'pending' | 'completed' | 'failed' | 'timeout' }
>

/**
 * Each C2B confirmation is verified by a request of its own (bench/c2b.ts): its statements are
 * prepared by hand, each name taken from the table.
 */
const r = sqlNames(providerRequests)
const GET_SQL = `SELECT ${selectAll(providerRequests)} FROM ${r.$} WHERE ${r.tenantId} = ? AND ${r.id} = ?`
const SENT_SQL = `UPDATE ${r.$} SET ${r.conversationId} = ?, ${r.updatedAt} = ? WHERE ${r.id} = ?`
const FINISH_SQL = `UPDATE ${r.$} SET ${r.status} = ?, ${r.resultCode} = ?, ${r.resultDesc} = ?,
  ${r.result} = ?, ${r.updatedAt} = ? WHERE ${r.id} = ? AND ${r.status} = 'pending'`

/** What a request asks about: a receipt (status, reversal) or a shortcode (balance). */
export type AskRequest = {
  transaction_id: string | null
  shortcode: string
  amount: number | null
} & Record<string, unknown>

export interface AskOptions {
  actorId: string | null
  remarks: string
  initiator?: AsyncInput['initiator']
}

const ENTITY = 'provider_request' as const

/** Records a request (its row and audit row) in the caller's transaction; returns its id. */
/** A provider request to record: where, whose, which kind, what it asks and who asked. */
export interface RequestRecord {
  db: Db
  tid: string
  kind: AnyKind
  request: AskRequest
  actorId: string | null
}

export function recordRequest(deps: PaymentDeps, input: RequestRecord) {
  const { db, tid, kind, request, actorId } = input
  const id = newId('req')
  const at = deps.nowIso()
  insertValues(db, providerRequests, {
    id,
    tenantId: tid,
    kind,
    conversationId: null,
    status: 'pending',
    request: JSON.stringify(request),
    resultCode: null,
    resultDesc: null,
    result: null,
    userId: actorId,
    createdAt: at,
    updatedAt: at,
  })
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
/** A recorded provider request to send: whose, its id, kind, what it asks and how. */
export interface AskedRequest {
  tid: string
  id: string
  kind: AnyKind
  request: AskRequest
  opts: AskOptions
}

export async function sendRequest(
  ctx: { deps: PaymentDeps; auth: CallbackAuth },
  asked: AskedRequest,
): Promise<RequestRow> {
  const { deps, auth } = ctx
  const { tid, id, kind, request, opts } = asked
  const fail = (desc: string) =>
    finishRequest(deps, { tid, id, status: 'failed', code: null, desc, result: null })
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
      await fail(err.message)
      throw err
    }
    if (mayHaveReached(err)) return getRequestRow(deps, tid, id)!
    await fail((err as Error).message)
    throw new AppError(
      'BAD_GATEWAY',
      `the payment provider did not accept the request: ${(err as Error).message}`,
    )
  }
  // Group-committed: a synchronous commit here blocked the event loop for one fsync per request.
  await grouped(db, () => db.sqlite.query(SENT_SQL).run(accepted.ConversationID, deps.nowIso(), id))
  return getRequestRow(deps, tid, id)!
}

/** A request of the tenant's by id. */
export const getRequestRow = (deps: PaymentDeps, tid: string, id: string) =>
  deps.tenantDb(tid).sqlite.query<RequestRow, [string, string]>(GET_SQL).get(tid, id)

/**
 * Moves a pending request to its end with its audit row, and runs `emit` in the same transaction;
 * false if it was not pending.
 */
export function finishRequest(
  deps: PaymentDeps,
  end: {
    tid: string
    id: string
    status: RequestRow['status']
    code: number | null
    desc: string
    result: Record<string, unknown> | null
    emit?: (db: Db) => void
  },
) {
  const db = deps.tenantDb(end.tid)
  return grouped(db, () => {
    const at = deps.nowIso()
    const changed = db.sqlite
      .query(FINISH_SQL)
      .run(
        end.status,
        end.code,
        end.desc,
        end.result ? JSON.stringify(end.result) : null,
        at,
        end.id,
      ).changes
    if (!changed) return false
    appendAudit(db, {
      tenantId: end.tid,
      entity: ENTITY,
      entityId: end.id,
      action: 'settled',
      fromStatus: 'pending',
      toStatus: end.status,
      detail: { result_code: end.code, result_desc: end.desc },
      actor: null,
      at,
    })
    end.emit?.(db)
    return true
  })
}
