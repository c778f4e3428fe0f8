import { Database } from 'bun:sqlite'
import type { auditLog } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import type { SqlRow } from './sql-row.ts'

/**
 * The append-only, hash-chained audit trail (DESIGN §8). Every payment state change appends one
 * row in the same transaction as the change: `hash = sha256(prev_hash + canonical(row))`, where the
 * canonical form is the JSON array of the row's fields in a fixed order (starting with the
 * tenant's own sequence number) and the first row's prev_hash is 64 zeros. Each tenant has its own
 * chain, so moving a tenant's rows to another file (tier upgrade) keeps them verifiable. Editing,
 * deleting or reordering any row breaks every hash after it.
 */
export const GENESIS = '0'.repeat(64)

export interface AuditEntry {
  tenantId: string
  entity: 'payment' | 'disbursement' | 'c2b_payment' | 'c2b_shortcode' | 'provider_request'
  entityId: string
  action: string
  fromStatus: string | null
  toStatus: string
  detail: Record<string, unknown>
  actor: string | null
  at: string
}

/** An `audit_log` row as raw SQL returns it. */
type AuditRow = SqlRow<typeof auditLog>

type Hashed = Omit<AuditRow, 'seq' | 'prev_hash' | 'hash'>

/** The chained columns, in the order the canonical form lists them (never reorder: hashes). */
const CHAINED = [
  'tenant_seq',
  'id',
  'tenant_id',
  'entity',
  'entity_id',
  'action',
  'from_status',
  'to_status',
  'detail',
  'actor',
  'at',
] as const satisfies ReadonlyArray<keyof Hashed>

const INSERT = `INSERT INTO audit_log (${[...CHAINED, 'prev_hash', 'hash'].join(', ')})
  VALUES (${[...CHAINED, 'prev_hash', 'hash'].map(() => '?').join(', ')})`

export function canonical(row: Hashed): string {
  return JSON.stringify(CHAINED.map((k) => row[k]))
}

export function chainHash(prevHash: string, row: Hashed): string {
  return new Bun.CryptoHasher('sha256').update(prevHash).update(canonical(row)).digest('hex')
}

/** Appends one row; call inside `db.write(...)` with the state change it records. */
export function appendAudit(db: Db, e: AuditEntry): void {
  const last = db.sqlite
    .query<{ tenant_seq: number; hash: string }, [string]>(
      'SELECT tenant_seq, hash FROM audit_log WHERE tenant_id = ? ORDER BY tenant_seq DESC LIMIT 1',
    )
    .get(e.tenantId)
  const row: Hashed = {
    tenant_seq: (last?.tenant_seq ?? 0) + 1,
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
  db.sqlite.query(INSERT).run(...CHAINED.map((k) => row[k]), prev, chainHash(prev, row))
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
    // One read transaction: the chain and the payments are checked on the same snapshot while the
    // service keeps writing.
    sqlite.run('BEGIN')
    const chain = verifyRows(
      path,
      sqlite.query<AuditRow, []>('SELECT * FROM audit_log ORDER BY tenant_id, tenant_seq, seq'),
    )
    if (!chain.ok) return chain
    return verifyStates(sqlite, chain)
  } finally {
    if (sqlite.inTransaction) sqlite.run('COMMIT')
    sqlite.close()
  }
}

function verifyRows(
  path: string,
  stmt: { iterate(): IterableIterator<AuditRow> } & object,
): VerifyResult {
  let tenant: string | null = null
  let prev = GENESIS
  let expectedSeq = 1
  let rows = 0
  for (const row of stmt.iterate()) {
    rows++
    if (row.tenant_id !== tenant) {
      tenant = row.tenant_id
      prev = GENESIS
      expectedSeq = 1
    }
    const fail = (reason: string): VerifyResult => ({
      path,
      rows,
      ok: false,
      broken: { seq: row.seq, id: row.id, reason: `tenant ${row.tenant_id}: ${reason}` },
    })
    if (row.tenant_seq !== expectedSeq)
      return fail(
        `expected the tenant's row ${expectedSeq} next, found ${row.tenant_seq} (a row was removed or renumbered)`,
      )
    if (row.prev_hash !== prev)
      return fail('prev_hash does not match the previous row (a row was removed or replaced)')
    const { seq: _s, prev_hash: _p, hash: _h, ...rest } = row
    if (chainHash(prev, rest) !== row.hash) return fail('hash does not match the row (edited)')
    prev = row.hash
    expectedSeq++
  }
  return { path, rows, ok: true }
}

/**
 * Every payment and disbursement must agree with its own audit trail: the status of its last audit
 * row, the amount and phone of its 'created' row, the checkout id of its 'accepted' row and the
 * receipt of its 'settled' row. So an edited payment row shows up too, not only an edited audit row.
 */
function verifyStates(sqlite: Database, chain: VerifyResult): VerifyResult {
  const trail = new Map<string, AuditRow[]>()
  for (const row of sqlite
    .query<AuditRow, []>('SELECT * FROM audit_log ORDER BY tenant_id, tenant_seq')
    .iterate()) {
    const list = trail.get(row.entity_id)
    if (list) list.push(row)
    else trail.set(row.entity_id, [row])
  }
  const tables = new Set(
    sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name),
  )
  type Entity = {
    id: string
    status: string
    amount_cents: number
    phone_number: string
    provider_id: string | null
    receipt: string | null
  }
  const sources: Array<[string, string]> = []
  if (tables.has('payments'))
    sources.push([
      'payment',
      'SELECT id, status, amount_cents, phone_number, checkout_request_id AS provider_id, mpesa_receipt_number AS receipt FROM payments ORDER BY id',
    ])
  if (tables.has('disbursements'))
    sources.push([
      'disbursement',
      'SELECT id, status, amount_cents, phone_number, conversation_id AS provider_id, transaction_receipt AS receipt FROM disbursements ORDER BY id',
    ])
  for (const [kind, sql] of sources) {
    for (const e of sqlite.query<Entity, []>(sql).iterate()) {
      const rows = trail.get(e.id) ?? []
      const last = rows[rows.length - 1]
      const fail = (reason: string): VerifyResult => ({
        ...chain,
        ok: false,
        broken: { seq: last?.seq ?? 0, id: last?.id ?? e.id, reason: `${kind} ${e.id}: ${reason}` },
      })
      if (!last) return fail('has no audit trail')
      if (last.to_status !== e.status)
        return fail(`status is '${e.status}' but the audit trail ends at '${last.to_status}'`)
      const detail = (r: AuditRow | undefined) =>
        r ? (JSON.parse(r.detail) as Record<string, unknown>) : {}
      const created = detail(rows.find((r) => r.action === 'created'))
      if (Number(created.amount) * 100 !== e.amount_cents)
        return fail(`amount ${toMajor(e.amount_cents)} differs from the audited ${created.amount}`)
      if (created.phone_number !== e.phone_number)
        return fail('phone number differs from the audited one')
      const accepted = detail(rows.find((r) => r.action === 'accepted'))
      const audited = accepted.checkout_request_id ?? accepted.conversation_id
      if (audited !== undefined && audited !== e.provider_id)
        return fail('provider id differs from the audited one')
      const settled = detail(rows.find((r) => r.action === 'settled'))
      const receipt = settled.mpesa_receipt_number ?? settled.transaction_receipt
      if (e.status === 'success' && receipt !== undefined && receipt !== e.receipt)
        return fail('receipt number differs from the audited one')
    }
  }
  return chain
}
