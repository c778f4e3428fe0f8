import type { TransactionEvent } from '../../schema/events.ts'
import type { Db } from '../kernel/db.ts'
import { toMinor } from '../kernel/money.ts'
import { type TimeZone, toIsoInstant } from './time.ts'

/** Rollup key for a transaction without a category. */
export const UNCATEGORIZED = 'Uncategorized'

/** The stored shape of one transaction (snake_case columns). */
export interface StoredTransaction {
  tenant_id: string
  id: string
  user_id: string | null
  occurred_at: string
  local_day: string
  amount_cents: number
  direction: 'in' | 'out'
  counterparty_name: string | null
  counterparty_phone: string | null
  counterparty_key: string | null
  description: string
  receipt_number: string | null
  balance_cents: number | null
  category: string | null
  category_confidence: number | null
  category_source: string | null
  rule_id: string | null
  source: string
}

/** Phone digits in international form (a leading 0 becomes Kenya's 254). */
export function normalizePhone(phone: string | null | undefined): string | null {
  if (!phone) return null
  let digits = phone.replace(/\D/g, '')
  if (digits.length === 10 && digits.startsWith('0')) digits = `254${digits.slice(1)}`
  if (digits.length === 9 && /^[17]/.test(digits)) digits = `254${digits}`
  return digits.length >= 6 ? digits : null
}

/** Groups a counterparty: by phone when known, otherwise by its name, case and spaces folded. */
export function counterpartyKey(name: string | null | undefined, phone: string | null | undefined) {
  const digits = normalizePhone(phone)
  if (digits) return `tel:${digits}`
  const folded = name?.trim().toLowerCase().replace(/\s+/g, ' ')
  return folded ? `name:${folded}` : null
}

/** Validates and converts one broker transaction to its stored row. */
export function toStored(tenantId: string, zone: TimeZone, e: TransactionEvent): StoredTransaction {
  const occurredAt = toIsoInstant(String(e.occurred_at), 'occurred_at')
  const amount = toMinor(e.amount, 'amount')
  if (amount < 0) throw new Error('amount must not be negative')
  if (e.direction !== 'in' && e.direction !== 'out') throw new Error('direction must be in or out')
  if (typeof e.transaction_id !== 'string' || e.transaction_id === '') {
    throw new Error('transaction_id is required')
  }
  return {
    tenant_id: tenantId,
    id: e.transaction_id,
    user_id: e.user_id ?? null,
    occurred_at: occurredAt,
    local_day: zone.dayOf(Date.parse(occurredAt)),
    amount_cents: amount,
    direction: e.direction,
    counterparty_name: e.counterparty_name ?? null,
    counterparty_phone: e.counterparty_phone ?? null,
    counterparty_key: counterpartyKey(e.counterparty_name, e.counterparty_phone),
    description: e.description ?? '',
    receipt_number: e.receipt_number ?? null,
    balance_cents: e.balance == null ? null : Math.round(e.balance * 100),
    category: e.category ?? null,
    category_confidence: e.category_confidence ?? null,
    category_source: e.category_source ?? null,
    rule_id: e.rule_id ?? null,
    source: e.source ?? 'api',
  }
}

const COLUMNS = [
  'tenant_id',
  'id',
  'user_id',
  'occurred_at',
  'local_day',
  'amount_cents',
  'direction',
  'counterparty_name',
  'counterparty_phone',
  'counterparty_key',
  'description',
  'receipt_number',
  'balance_cents',
  'category',
  'category_confidence',
  'category_source',
  'rule_id',
  'source',
] as const

const INSERT_SQL = `INSERT OR IGNORE INTO transactions (${COLUMNS.join(', ')}, updated_at)
  VALUES (${COLUMNS.map(() => '?').join(', ')}, ?)`
const UPDATE_SQL = `UPDATE transactions SET ${COLUMNS.slice(2)
  .map((c) => `${c} = ?`)
  .join(', ')}, updated_at = ? WHERE tenant_id = ? AND id = ?`
const DAILY_SQL = `INSERT INTO daily_totals
  (tenant_id, day, user_id, direction, category, tx_count, amount_cents) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, day, user_id, direction, category) DO UPDATE SET
  tx_count = tx_count + excluded.tx_count, amount_cents = amount_cents + excluded.amount_cents`
const DAY_SQL = `INSERT INTO daily_summaries
  (tenant_id, day, user_id, in_count, in_cents, out_count, out_cents) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, day, user_id) DO UPDATE SET
  in_count = in_count + excluded.in_count, in_cents = in_cents + excluded.in_cents,
  out_count = out_count + excluded.out_count, out_cents = out_cents + excluded.out_cents`
const DAILY_CP_SQL = `INSERT INTO daily_counterparties
  (tenant_id, day, counterparty_key, direction, tx_count, amount_cents, last_seen)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, day, counterparty_key, direction) DO UPDATE SET
  tx_count = tx_count + excluded.tx_count, amount_cents = amount_cents + excluded.amount_cents,
  last_seen = max(last_seen, excluded.last_seen)`
const CP_SQL = `INSERT INTO counterparties
  (tenant_id, key, name, phone, tx_count, total_cents, in_cents, out_cents, first_seen, last_seen)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, key) DO UPDATE SET
  name = CASE WHEN excluded.last_seen >= last_seen THEN coalesce(excluded.name, name) ELSE coalesce(name, excluded.name) END,
  phone = coalesce(phone, excluded.phone),
  tx_count = tx_count + excluded.tx_count, total_cents = total_cents + excluded.total_cents,
  in_cents = in_cents + excluded.in_cents, out_cents = out_cents + excluded.out_cents,
  first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)`

/** What an insert or update did; counted for logs and tests. */
export interface ApplyResult {
  inserted: number
  updated: number
  unchanged: number
}

/**
 * Applies stored rows to one tenant database: a new transaction id is inserted, a known one is an
 * update (a category override): the row changes and the rollups move from the old values to the new
 * ones. Call inside a write transaction (handleOnce) so rows and rollups commit together.
 * `onlyNew` skips known ids (raw transactions never overwrite categorized ones).
 */
export function applyTransactions(
  db: Db,
  rows: readonly StoredTransaction[],
  now: string,
  opts: { onlyNew?: boolean } = {},
): ApplyResult {
  const sqlite = db.sqlite
  const { insert } = statementsOf(db)
  const result: ApplyResult = { inserted: 0, updated: 0, unchanged: 0 }
  for (const row of rows) {
    const values = COLUMNS.map((c) => row[c])
    if (insert.run(...(values as never[]), now).changes === 1) {
      addToRollups(db, row, 1)
      result.inserted++
      continue
    }
    if (opts.onlyNew) {
      result.unchanged++
      continue
    }
    const old = sqlite
      .query('SELECT * FROM transactions WHERE tenant_id = ? AND id = ?')
      .get(row.tenant_id, row.id) as StoredTransaction
    if (COLUMNS.every((c) => old[c] === row[c])) {
      result.unchanged++
      continue
    }
    sqlite
      .query(UPDATE_SQL)
      .run(...(COLUMNS.slice(2).map((c) => row[c]) as never[]), now, row.tenant_id, row.id)
    addToRollups(db, old, -1)
    addToRollups(db, row, 1)
    const cpMoved =
      old.counterparty_key !== row.counterparty_key ||
      old.local_day !== row.local_day ||
      old.occurred_at !== row.occurred_at ||
      old.direction !== row.direction
    if (cpMoved) {
      refreshCounterparty(db, old)
      refreshCounterparty(db, row)
    }
    result.updated++
  }
  return result
}

type Statement = ReturnType<Db['sqlite']['prepare']>
const prepared = new WeakMap<Db, Record<'insert' | 'day' | 'daily' | 'dailyCp' | 'cp', Statement>>()

/** Statements prepared once per open database: the insert path runs them for every row. */
function statementsOf(db: Db) {
  let s = prepared.get(db)
  if (!s) {
    s = {
      insert: db.sqlite.prepare(INSERT_SQL),
      day: db.sqlite.prepare(DAY_SQL),
      daily: db.sqlite.prepare(DAILY_SQL),
      dailyCp: db.sqlite.prepare(DAILY_CP_SQL),
      cp: db.sqlite.prepare(CP_SQL),
    }
    prepared.set(db, s)
  }
  return s
}

function addToRollups(db: Db, r: StoredTransaction, sign: 1 | -1): void {
  const st = statementsOf(db)
  const cents = sign * r.amount_cents
  const isIn = r.direction === 'in'
  st.day.run(
    r.tenant_id,
    r.local_day,
    r.user_id ?? '',
    isIn ? sign : 0,
    isIn ? cents : 0,
    isIn ? 0 : sign,
    isIn ? 0 : cents,
  )
  st.daily.run(
    r.tenant_id,
    r.local_day,
    r.user_id ?? '',
    r.direction,
    r.category ?? UNCATEGORIZED,
    sign,
    cents,
  )
  if (!r.counterparty_key) {
    if (sign < 0) pruneDaily(db, r)
    return
  }
  st.dailyCp.run(
    r.tenant_id,
    r.local_day,
    r.counterparty_key,
    r.direction,
    sign,
    cents,
    r.occurred_at,
  )
  st.cp.run(
    r.tenant_id,
    r.counterparty_key,
    sign > 0 ? r.counterparty_name : null,
    sign > 0 ? normalizePhone(r.counterparty_phone) : null,
    sign,
    cents,
    r.direction === 'in' ? cents : 0,
    r.direction === 'out' ? cents : 0,
    r.occurred_at,
    r.occurred_at,
  )
  if (sign < 0) pruneDaily(db, r)
}

/** Rollup rows that fell to zero are removed so `active_days` and customer lists stay exact. */
function pruneDaily(db: Db, r: StoredTransaction): void {
  db.sqlite
    .query(
      'DELETE FROM daily_summaries WHERE tenant_id = ? AND day = ? AND user_id = ? AND in_count + out_count <= 0',
    )
    .run(r.tenant_id, r.local_day, r.user_id ?? '')
  db.sqlite
    .query(
      'DELETE FROM daily_totals WHERE tenant_id = ? AND day = ? AND user_id = ? AND direction = ? AND category = ? AND tx_count <= 0',
    )
    .run(r.tenant_id, r.local_day, r.user_id ?? '', r.direction, r.category ?? UNCATEGORIZED)
  if (!r.counterparty_key) return
  db.sqlite
    .query(
      'DELETE FROM daily_counterparties WHERE tenant_id = ? AND day = ? AND counterparty_key = ? AND direction = ? AND tx_count <= 0',
    )
    .run(r.tenant_id, r.local_day, r.counterparty_key, r.direction)
  db.sqlite
    .query('DELETE FROM counterparties WHERE tenant_id = ? AND key = ? AND tx_count <= 0')
    .run(r.tenant_id, r.counterparty_key)
}

/**
 * first/last seen cannot be subtracted: after a row moved (a rare correction, never a category
 * override) they are read again. The daily cell is re-read through the time index (its local day
 * lies within a day of the instant); the all-time first/last scans that counterparty's rows.
 */
function refreshCounterparty(db: Db, r: StoredTransaction): void {
  if (!r.counterparty_key) return
  const sqlite = db.sqlite
  sqlite
    .query(
      `UPDATE counterparties SET
        first_seen = (SELECT min(occurred_at) FROM transactions WHERE tenant_id = ?1 AND counterparty_key = ?2),
        last_seen = (SELECT max(occurred_at) FROM transactions WHERE tenant_id = ?1 AND counterparty_key = ?2)
       WHERE tenant_id = ?1 AND key = ?2`,
    )
    .run(r.tenant_id, r.counterparty_key)
  const at = Date.parse(r.occurred_at)
  sqlite
    .query(
      `UPDATE daily_counterparties SET last_seen = (
         SELECT max(occurred_at) FROM transactions t WHERE t.tenant_id = ?1
           AND t.occurred_at >= ?4 AND t.occurred_at < ?5 AND t.local_day = ?3
           AND t.counterparty_key = ?2 AND t.direction = daily_counterparties.direction)
       WHERE tenant_id = ?1 AND counterparty_key = ?2 AND day = ?3`,
    )
    .run(
      r.tenant_id,
      r.counterparty_key,
      r.local_day,
      new Date(at - 2 * 86_400_000).toISOString(),
      new Date(at + 2 * 86_400_000).toISOString(),
    )
}
