import type { idempotencyKeys } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import {
  IDEMPOTENCY_RETENTION_MS,
  idempotencyKeyOf,
  keyReused,
  requestHash,
} from '../kernel/idempotency.ts'
import type { SqlRow } from './sql-row.ts'

export { requestHash }

/**
 * `Idempotency-Key` records, per tenant and route. A key is bound to one payment (`ref`) in the
 * same transaction that creates the payment, and stays bound unless the provider certainly never
 * received the request: one key never starts two provider requests (DESIGN §8).
 */
export type KeyRow = Pick<
  SqlRow<typeof idempotencyKeys>,
  'request_hash' | 'ref' | 'response_status' | 'response_body'
>

/** What to do with a request that carries a key. */
export type KeyDecision =
  | { action: 'new' }
  | { action: 'replay'; body: unknown }
  | { action: 'in_progress' }
  | { action: 'current'; ref: string }

/** Answers given for a key already used: the route marks them `Idempotent-Replayed: true`. */
const replays = new WeakSet<object>()

/** Marks an answer as one given again for a key (the kernel's header, same as every create). */
export function markReplayed<T>(answer: T): T {
  if (answer && typeof answer === 'object') replays.add(answer)
  return answer
}

export const wasReplayed = (answer: unknown): boolean =>
  !!answer && typeof answer === 'object' && replays.has(answer)

/**
 * - no record: start a payment;
 * - another body: 409 IDEMPOTENCY_KEY_REUSED;
 * - an answer stored: the same answer again;
 * - the first request still calling the provider in this process: 409 IDEMPOTENCY_IN_PROGRESS;
 * - otherwise (its process died, or the answer is unknown): the payment's current state.
 */
export function decideKey(row: KeyRow | null, hash: string, running: boolean): KeyDecision {
  if (!row) return { action: 'new' }
  if (row.request_hash !== hash) throw keyReused()
  if (row.response_status !== null)
    return { action: 'replay', body: markReplayed(JSON.parse(row.response_body ?? 'null')) }
  return running ? { action: 'in_progress' } : { action: 'current', ref: row.ref }
}

/** The kernel's check: null without a key, 422 past 255 characters. */
export const checkKey = idempotencyKeyOf

/** One idempotency key: whose it is, the route it was sent to, and the key itself. */
export interface KeyRef {
  tid: string
  route: string
  key: string
}

/**
 * The key's record. An answered key is kept 24 h like every create's (the kernel's retention);
 * a key whose provider request never got an answer stays bound until it is settled.
 */
export function readKey(db: Db, { tid, route, key }: KeyRef, nowMs: number) {
  db.sqlite
    .query(
      'DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ? AND response_status IS NOT NULL AND created_at < ?',
    )
    .run(tid, route, key, new Date(nowMs - IDEMPOTENCY_RETENTION_MS).toISOString())
  return db.sqlite
    .query<KeyRow, [string, string, string]>(
      'SELECT request_hash, ref, response_status, response_body FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?',
    )
    .get(tid, route, key)
}

/** Binds the key to `ref`, inside the write that creates it; false when another request has it. */
export function claimKey(db: Db, k: KeyRef & { hash: string; ref: string; at: string }): boolean {
  return (
    db.sqlite
      .query(
        'INSERT OR IGNORE INTO idempotency_keys (tenant_id, route, key, request_hash, ref, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(k.tid, k.route, k.key, k.hash, k.ref, k.at).changes === 1
  )
}

/** Stores the answer the provider's acceptance produced, inside the write that records it. */
export function storeAnswer(db: Db, { tid, route, key }: KeyRef, body: unknown) {
  db.sqlite
    .query(
      'UPDATE idempotency_keys SET response_status = 202, response_body = ? WHERE tenant_id = ? AND route = ? AND key = ?',
    )
    .run(JSON.stringify(body), tid, route, key)
}

/** Frees the key: only for a request the provider certainly never received. */
export function releaseKey(db: Db, { tid, route, key }: KeyRef) {
  db.sqlite
    .query('DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?')
    .run(tid, route, key)
}
