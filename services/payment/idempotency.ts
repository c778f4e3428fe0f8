import type { Db } from '../kernel/db.ts'
import { AppError, ValidationError } from '../kernel/errors.ts'

/**
 * `Idempotency-Key` records, per tenant and route. A key is bound to one payment (`ref`) in the
 * same transaction that creates the payment, and stays bound unless the provider certainly never
 * received the request: one key never starts two provider requests (DESIGN §8).
 */
export interface KeyRow {
  request_hash: string
  ref: string
  response_status: number | null
  response_body: string | null
}

/** What to do with a request that carries a key. */
export type KeyDecision =
  | { action: 'new' }
  | { action: 'replay'; body: unknown }
  | { action: 'in_progress' }
  | { action: 'current'; ref: string }

/**
 * - no record: start a payment;
 * - another body: 409 IDEMPOTENCY_KEY_REUSED;
 * - an answer stored: the same answer again;
 * - the first request still calling the provider in this process: 409 IDEMPOTENCY_IN_PROGRESS;
 * - otherwise (its process died, or the answer is unknown): the payment's current state.
 */
export function decideKey(row: KeyRow | null, hash: string, running: boolean): KeyDecision {
  if (!row) return { action: 'new' }
  if (row.request_hash !== hash)
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'this Idempotency-Key was used with a different request body',
    )
  if (row.response_status !== null)
    return { action: 'replay', body: JSON.parse(row.response_body ?? 'null') }
  return running ? { action: 'in_progress' } : { action: 'current', ref: row.ref }
}

export function checkKey(key: string | null | undefined): string | null {
  if (key === null || key === undefined || key === '') return null
  if (key.length > 255)
    throw new ValidationError('Idempotency-Key: must be at most 255 characters', [
      { field: 'Idempotency-Key', message: 'must be at most 255 characters' },
    ])
  return key
}

export const readKey = (db: Db, tid: string, route: string, key: string) =>
  db.sqlite
    .query<KeyRow, [string, string, string]>(
      'SELECT request_hash, ref, response_status, response_body FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?',
    )
    .get(tid, route, key)

/** Binds the key to `ref`, inside the write that creates it; false when another request has it. */
export function claimKey(
  db: Db,
  k: { tid: string; route: string; key: string; hash: string; ref: string; at: string },
): boolean {
  return (
    db.sqlite
      .query(
        'INSERT OR IGNORE INTO idempotency_keys (tenant_id, route, key, request_hash, ref, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(k.tid, k.route, k.key, k.hash, k.ref, k.at).changes === 1
  )
}

/** Stores the answer the provider's acceptance produced, inside the write that records it. */
export function storeAnswer(db: Db, tid: string, route: string, key: string, body: unknown) {
  db.sqlite
    .query(
      'UPDATE idempotency_keys SET response_status = 202, response_body = ? WHERE tenant_id = ? AND route = ? AND key = ?',
    )
    .run(JSON.stringify(body), tid, route, key)
}

/** Frees the key: only for a request the provider certainly never received. */
export function releaseKey(db: Db, tid: string, route: string, key: string) {
  db.sqlite
    .query('DELETE FROM idempotency_keys WHERE tenant_id = ? AND route = ? AND key = ?')
    .run(tid, route, key)
}

const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex')

/** JSON with sorted keys, so the same body always hashes the same. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`
  if (v && typeof v === 'object')
    return `{${Object.keys(v as object)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(v)
}

export const requestHash = (body: unknown) => sha256(stableJson(body))
