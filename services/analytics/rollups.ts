import type { Db } from '../kernel/db.ts'
import { preparedPerDb } from '../kernel/prepared.ts'
import {
  isTradingParty,
  normalizePhone,
  type StoredTransaction,
  TRADING_SQL,
  UNCATEGORIZED,
} from './stored.ts'

/**
 * The rollups beside the transactions table, moved by one transaction at a time: +1 when it is
 * inserted, −1 then +1 when it changes. Rows that fall to zero are deleted. The day and category
 * rollups hold every kind (the balance counts everything; revenue and expenses pick their kinds);
 * the counterparty rollups hold only customers and suppliers (`isTradingParty`).
 */
const DAILY_SQL = `INSERT INTO daily_totals
  (tenant_id, day, user_id, direction, category, kind, tx_count, amount_cents)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, day, user_id, direction, category, kind) DO UPDATE SET
  tx_count = tx_count + excluded.tx_count, amount_cents = amount_cents + excluded.amount_cents`
const DAY_SQL = `INSERT INTO daily_summaries
  (tenant_id, day, user_id, kind, in_count, in_cents, out_count, out_cents)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (tenant_id, day, user_id, kind) DO UPDATE SET
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

/** Statements prepared once per open database: the insert path runs them for every row. */
export const statementsOf = preparedPerDb({
  day: DAY_SQL,
  daily: DAILY_SQL,
  dailyCp: DAILY_CP_SQL,
  cp: CP_SQL,
})
type Statements = ReturnType<typeof statementsOf>

/*
 * The rollup cells a row counts in. Positional, not one object, because the insert path calls
 * them for every row.
 */

/** Transactions and cents in and out, added to a day cell. */
interface DayAmounts {
  inCount: number
  inCents: number
  outCount: number
  outCents: number
}

/** Adds to the row's (day, user, kind) cell: transactions and cents in and out. */
export function addToDayCell(
  st: Statements,
  r: StoredTransaction,
  { inCount, inCents, outCount, outCents }: DayAmounts,
): void {
  st.day.run(
    r.tenant_id,
    r.local_day,
    r.user_id ?? '',
    r.kind ?? '',
    inCount,
    inCents,
    outCount,
    outCents,
  )
}

/** Adds to the row's (day, user, direction, category, kind) cell. */
export function addToCategoryCell(
  st: Statements,
  r: StoredTransaction,
  count: number,
  cents: number,
): void {
  st.daily.run(...categoryCell(r), count, cents)
}

/** The key of the row's category cell: tenant, day, user, direction, category, kind. */
function categoryCell(r: StoredTransaction) {
  return [
    r.tenant_id,
    r.local_day,
    r.user_id ?? '',
    r.direction,
    r.category ?? UNCATEGORIZED,
    r.kind ?? '',
  ] as const
}

export function addToRollups(db: Db, r: StoredTransaction, sign: 1 | -1): void {
  const st = statementsOf(db)
  const cents = sign * r.amount_cents
  const isIn = r.direction === 'in'
  addToDayCell(st, r, {
    inCount: isIn ? sign : 0,
    inCents: isIn ? cents : 0,
    outCount: isIn ? 0 : sign,
    outCents: isIn ? 0 : cents,
  })
  addToCategoryCell(st, r, sign, cents)
  if (!r.counterparty_key || !isTradingParty(r.kind)) {
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

/**
 * A change of category only (the usual override, or a raw row getting its category): only the
 * per-category cell moves; the day, counterparty and customer rollups stay as they are.
 */
export function moveCategory(db: Db, old: StoredTransaction, row: StoredTransaction): void {
  const st = statementsOf(db)
  const cell = (r: StoredTransaction, sign: 1 | -1) =>
    addToCategoryCell(st, r, sign, sign * r.amount_cents)
  cell(old, -1)
  pruneCategoryCell(db, old)
  cell(row, 1)
}

/** The row's (day, user, direction, category, kind) cell, removed once it counts nothing. */
function pruneCategoryCell(db: Db, r: StoredTransaction): void {
  db.sqlite
    .query(
      'DELETE FROM daily_totals WHERE tenant_id = ? AND day = ? AND user_id = ? AND direction = ? AND category = ? AND kind = ? AND tx_count <= 0',
    )
    .run(...categoryCell(r))
}

/** Rollup rows that fell to zero are removed so `active_days` and customer lists stay exact. */
function pruneDaily(db: Db, r: StoredTransaction): void {
  db.sqlite
    .query(
      'DELETE FROM daily_summaries WHERE tenant_id = ? AND day = ? AND user_id = ? AND kind = ? AND in_count + out_count <= 0',
    )
    .run(r.tenant_id, r.local_day, r.user_id ?? '', r.kind ?? '')
  pruneCategoryCell(db, r)
  if (!r.counterparty_key || !isTradingParty(r.kind)) return
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
export function refreshCounterparty(db: Db, r: StoredTransaction): void {
  if (!r.counterparty_key || !isTradingParty(r.kind)) return
  const sqlite = db.sqlite
  sqlite
    .query(
      `UPDATE counterparties SET
        first_seen = (SELECT min(occurred_at) FROM transactions
          WHERE tenant_id = ?1 AND counterparty_key = ?2 AND ${TRADING_SQL}),
        last_seen = (SELECT max(occurred_at) FROM transactions
          WHERE tenant_id = ?1 AND counterparty_key = ?2 AND ${TRADING_SQL})
       WHERE tenant_id = ?1 AND key = ?2`,
    )
    .run(r.tenant_id, r.counterparty_key)
  const at = Date.parse(r.occurred_at)
  sqlite
    .query(
      `UPDATE daily_counterparties SET last_seen = (
         SELECT max(occurred_at) FROM transactions t WHERE t.tenant_id = ?1
           AND t.occurred_at >= ?4 AND t.occurred_at < ?5 AND t.local_day = ?3
           AND t.counterparty_key = ?2 AND t.direction = daily_counterparties.direction
           AND t.${TRADING_SQL})
       WHERE tenant_id = ?1 AND direction IN ('in', 'out') AND day = ?3 AND counterparty_key = ?2`,
    )
    .run(
      r.tenant_id,
      r.counterparty_key,
      r.local_day,
      new Date(at - 2 * 86_400_000).toISOString(),
      new Date(at + 2 * 86_400_000).toISOString(),
    )
}
