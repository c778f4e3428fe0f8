import { Database } from 'bun:sqlite'
import { auditLog, disbursements, payments } from '../../schema/payment/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { selectAll } from './sql-row.ts'

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

type AuditRow = typeof auditLog.$inferSelect

type Hashed = Omit<AuditRow, 'seq' | 'prevHash' | 'hash'>

/** The chained columns, in the order the canonical form lists them (never reorder: hashes). */
const CHAINED = [
  'tenantSeq',
  'id',
  'tenantId',
  'entity',
  'entityId',
  'action',
  'fromStatus',
  'toStatus',
  'detail',
  'actor',
  'at',
] as const satisfies ReadonlyArray<keyof Hashed>

/**
 * Every state change appends a row (bench/payment.ts): the append's statements are prepared by
 * hand, each name taken from the table, and so are the verifier's (it reads a file of its own).
 */
const a = sqlNames(auditLog)
const WRITTEN = [...CHAINED, 'prevHash', 'hash'] as const
const INSERT = `INSERT INTO ${a.$} (${WRITTEN.map((k) => a[k]).join(', ')})
  VALUES (${WRITTEN.map(() => '?').join(', ')})`
const LAST_SQL = `SELECT ${selectList(auditLog, ['tenantSeq', 'hash'])} FROM ${a.$}
  WHERE ${a.tenantId} = ? ORDER BY ${a.tenantSeq} DESC LIMIT 1`
const ALL_ROWS = `SELECT ${selectAll(auditLog)} FROM ${a.$}`
const P = sqlNames(payments)
const D = sqlNames(disbursements)
/** Each kind's rows as the verifier compares them with their trail. */
const ENTITY_SOURCES = [
  {
    kind: 'payment',
    table: P.$,
    sql: `SELECT ${P.id} AS id, ${P.status} AS status, ${P.amountCents} AS amountCents,
      ${P.phoneNumber} AS phoneNumber, ${P.checkoutRequestId} AS providerId,
      ${P.mpesaReceiptNumber} AS receipt FROM ${P.$} ORDER BY ${P.id}`,
  },
  {
    kind: 'disbursement',
    table: D.$,
    sql: `SELECT ${D.id} AS id, ${D.status} AS status, ${D.amountCents} AS amountCents,
      ${D.phoneNumber} AS phoneNumber, ${D.conversationId} AS providerId,
      ${D.transactionReceipt} AS receipt FROM ${D.$} ORDER BY ${D.id}`,
  },
]

export function canonical(row: Hashed): string {
  return JSON.stringify(CHAINED.map((k) => row[k]))
}

export function chainHash(prevHash: string, row: Hashed): string {
  return new Bun.CryptoHasher('sha256').update(prevHash).update(canonical(row)).digest('hex')
}

/** Appends one row; call inside `db.write(...)` with the state change it records. */
export function appendAudit(db: Db, e: AuditEntry): void {
  const last = db.sqlite
    .query<Pick<AuditRow, 'tenantSeq' | 'hash'>, [string]>(LAST_SQL)
    .get(e.tenantId)
  const row: Hashed = {
    tenantSeq: (last?.tenantSeq ?? 0) + 1,
    id: newId('aud'),
    tenantId: e.tenantId,
    entity: e.entity,
    entityId: e.entityId,
    action: e.action,
    fromStatus: e.fromStatus,
    toStatus: e.toStatus,
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
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(a.$)
    if (!has) return { path, rows: 0, ok: true }
    // One read transaction: the chain and the payments are checked on the same snapshot while the
    // service keeps writing.
    sqlite.run('BEGIN')
    const chain = verifyRows(
      path,
      sqlite.query<AuditRow, []>(`${ALL_ROWS} ORDER BY ${a.tenantId}, ${a.tenantSeq}, ${a.seq}`),
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
    if (row.tenantId !== tenant) {
      tenant = row.tenantId
      prev = GENESIS
      expectedSeq = 1
    }
    const fail = (reason: string): VerifyResult => ({
      path,
      rows,
      ok: false,
      broken: { seq: row.seq, id: row.id, reason: `tenant ${row.tenantId}: ${reason}` },
    })
    if (row.tenantSeq !== expectedSeq)
      return fail(
        `expected the tenant's row ${expectedSeq} next, found ${row.tenantSeq} (a row was removed or renumbered)`,
      )
    if (row.prevHash !== prev)
      return fail('prev_hash does not match the previous row (a row was removed or replaced)')
    const { seq: _s, prevHash: _p, hash: _h, ...rest } = row
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
    .query<AuditRow, []>(`${ALL_ROWS} ORDER BY ${a.tenantId}, ${a.tenantSeq}`)
    .iterate()) {
    const list = trail.get(row.entityId)
    if (list) list.push(row)
    else trail.set(row.entityId, [row])
  }
  const tables = new Set(
    sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name),
  )
  type Entity = Pick<
    typeof payments.$inferSelect,
    'id' | 'status' | 'amountCents' | 'phoneNumber'
  > & { providerId: string | null; receipt: string | null }
  for (const { kind, table, sql } of ENTITY_SOURCES) {
    if (!tables.has(table)) continue
    for (const e of sqlite.query<Entity, []>(sql).iterate()) {
      const rows = trail.get(e.id) ?? []
      const last = rows[rows.length - 1]
      const fail = (reason: string): VerifyResult => ({
        ...chain,
        ok: false,
        broken: { seq: last?.seq ?? 0, id: last?.id ?? e.id, reason: `${kind} ${e.id}: ${reason}` },
      })
      if (!last) return fail('has no audit trail')
      if (last.toStatus !== e.status)
        return fail(`status is '${e.status}' but the audit trail ends at '${last.toStatus}'`)
      const detail = (r: AuditRow | undefined) =>
        r ? (JSON.parse(r.detail) as Record<string, unknown>) : {}
      const created = detail(rows.find((r) => r.action === 'created'))
      if (Number(created.amount) * 100 !== e.amountCents)
        return fail(`amount ${toMajor(e.amountCents)} differs from the audited ${created.amount}`)
      if (created.phone_number !== e.phoneNumber)
        return fail('phone number differs from the audited one')
      const accepted = detail(rows.find((r) => r.action === 'accepted'))
      const audited = accepted.checkout_request_id ?? accepted.conversation_id
      if (audited !== undefined && audited !== e.providerId)
        return fail('provider id differs from the audited one')
      const settled = detail(rows.find((r) => r.action === 'settled'))
      const receipt = settled.mpesa_receipt_number ?? settled.transaction_receipt
      if (e.status === 'success' && receipt !== undefined && receipt !== e.receipt)
        return fail('receipt number differs from the audited one')
    }
  }
  return chain
}
