import { Database } from 'bun:sqlite'
import type { Db } from '../kernel/db.ts'
import { newId } from '../kernel/ids.ts'

/**
 * The append-only, hash-chained audit trail (DESIGN §8). Every payment state change appends one
 * row in the same transaction as the change: `hash = sha256(prev_hash + canonical(row))`, where the
 * canonical form is the JSON array of the row's fields in a fixed order and the first row's
 * prev_hash is 64 zeros. Editing, deleting or reordering any row breaks every hash after it.
 */
export const GENESIS = '0'.repeat(64)

export interface AuditEntry {
  tenantId: string
  entity: 'payment' | 'disbursement'
  entityId: string
  action: string
  fromStatus: string | null
  toStatus: string
  detail: Record<string, unknown>
  actor: string | null
  at: string
}

interface AuditRow {
  seq: number
  id: string
  tenant_id: string
  entity: string
  entity_id: string
  action: string
  from_status: string | null
  to_status: string
  detail: string
  actor: string | null
  at: string
  prev_hash: string
  hash: string
}

export function canonical(row: Omit<AuditRow, 'prev_hash' | 'hash'>): string {
  return JSON.stringify([
    row.seq,
    row.id,
    row.tenant_id,
    row.entity,
    row.entity_id,
    row.action,
    row.from_status,
    row.to_status,
    row.detail,
    row.actor,
    row.at,
  ])
}

export function chainHash(prevHash: string, row: Omit<AuditRow, 'prev_hash' | 'hash'>): string {
  return new Bun.CryptoHasher('sha256').update(prevHash).update(canonical(row)).digest('hex')
}

/** Appends one row; call inside `db.write(...)` with the state change it records. */
export function appendAudit(db: Db, e: AuditEntry): void {
  const last = db.sqlite
    .query<{ seq: number; hash: string }, []>(
      'SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1',
    )
    .get()
  const row = {
    seq: (last?.seq ?? 0) + 1,
    id: newId('aud'),
    tenant_id: e.tenantId,
    entity: e.entity,
    entity_id: e.entityId,
    action: e.action,
    from_status: e.fromStatus,
    to_status: e.toStatus,
    detail: JSON.stringify(e.detail),
    actor: e.actor,
    at: e.at,
  }
  const prev = last?.hash ?? GENESIS
  db.sqlite
    .query(
      `INSERT INTO audit_log (seq, id, tenant_id, entity, entity_id, action, from_status, to_status,
        detail, actor, at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      row.seq,
      row.id,
      row.tenant_id,
      row.entity,
      row.entity_id,
      row.action,
      row.from_status,
      row.to_status,
      row.detail,
      row.actor,
      row.at,
      prev,
      chainHash(prev, row),
    )
}

export interface VerifyResult {
  path: string
  rows: number
  ok: boolean
  /** The first row that does not verify. */
  broken?: { seq: number; id: string; reason: string }
}

/** Verifies one database file's chain, opened read-only. */
export function verifyAuditFile(path: string): VerifyResult {
  const sqlite = new Database(path, { readonly: true })
  try {
    const has = sqlite
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_log'")
      .get()
    if (!has) return { path, rows: 0, ok: true }
    return verifyRows(path, sqlite.query<AuditRow, []>('SELECT * FROM audit_log ORDER BY seq'))
  } finally {
    sqlite.close()
  }
}

function verifyRows(
  path: string,
  stmt: { iterate(): IterableIterator<AuditRow> } & object,
): VerifyResult {
  let prev = GENESIS
  let expectedSeq = 1
  let rows = 0
  for (const row of stmt.iterate()) {
    rows++
    const fail = (reason: string): VerifyResult => ({
      path,
      rows,
      ok: false,
      broken: { seq: row.seq, id: row.id, reason },
    })
    if (row.seq !== expectedSeq)
      return fail(`expected row ${expectedSeq} next, found ${row.seq} (a row was removed)`)
    if (row.prev_hash !== prev)
      return fail('prev_hash does not match the previous row (a row was removed or replaced)')
    const { prev_hash: _p, hash: _h, ...rest } = row
    if (chainHash(prev, rest) !== row.hash) return fail('hash does not match the row (edited)')
    prev = row.hash
    expectedSeq++
  }
  return { path, rows, ok: true }
}
