import { idempotencyKeys } from '../../schema/payment/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import {
  IDEMPOTENCY_RETENTION_MS,
  idempotencyKeyOf,
  keyReused,
  requestHash,
} from '../kernel/idempotency.ts'

export { requestHash }

/**
 * `Idempotency-Key` records, per tenant and route. A key is bound to one payment (`ref`) in the
 * same transaction that creates the payment, and stays bound unless the provider certainly never
 * received the request: one key never starts two provider requests (DESIGN §8).
 */
export type KeyRow = Pick<
  typeof idempotencyKeys.$inferSelect,
  'requestHash' | 'ref' | 'responseStatus' | 'responseBody'
>

/**
 * Every push reads and claims its key (bench/payment.ts): prepared statements written by hand,
 * each name taken from the table.
 */
const k = sqlNames(idempotencyKeys)
const KEY = `${k.tenantId} = ? AND ${k.route} = ? AND ${k.key} = ?`
const EXPIRE_SQL = `DELETE FROM ${k.$} WHERE ${KEY} AND ${k.responseStatus} IS NOT NULL
  AND ${k.createdAt} < ?`
const READ_SQL = `SELECT ${selectList(idempotencyKeys, ['requestHash', 'ref', 'responseStatus', 'responseBody'])}
  FROM ${k.$} WHERE ${KEY}`
// OR IGNORE: the primary key is the only constraint; a taken key leaves the row as it is.
const CLAIM_SQL = `INSERT OR IGNORE INTO ${k.$} (${k.tenantId}, ${k.route}, ${k.key}, ${k.requestHash},
  ${k.ref}, ${k.createdAt}) VALUES (?, ?, ?, ?, ?, ?)`
const ANSWER_SQL = `UPDATE ${k.$} SET ${k.responseStatus} = 202, ${k.responseBody} = ? WHERE ${KEY}`
const RELEASE_SQL = `DELETE FROM ${k.$} WHERE ${KEY}`

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
  if (row.requestHash !== hash) throw keyReused()
  if (row.responseStatus !== null)
    return { action: 'replay', body: markReplayed(JSON.parse(row.responseBody ?? 'null')) }
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
    .query(EXPIRE_SQL)
    .run(tid, route, key, new Date(nowMs - IDEMPOTENCY_RETENTION_MS).toISOString())
  return db.sqlite.query<KeyRow, [string, string, string]>(READ_SQL).get(tid, route, key)
}

/** Binds the key to `ref`, inside the write that creates it; false when another request has it. */
export function claimKey(db: Db, k: KeyRef & { hash: string; ref: string; at: string }): boolean {
  return db.sqlite.query(CLAIM_SQL).run(k.tid, k.route, k.key, k.hash, k.ref, k.at).changes === 1
}

/** Stores the answer the provider's acceptance produced, inside the write that records it. */
export function storeAnswer(db: Db, { tid, route, key }: KeyRef, body: unknown) {
  db.sqlite.query(ANSWER_SQL).run(JSON.stringify(body), tid, route, key)
}

/** Frees the key: only for a request the provider certainly never received. */
export function releaseKey(db: Db, { tid, route, key }: KeyRef) {
  db.sqlite.query(RELEASE_SQL).run(tid, route, key)
}
