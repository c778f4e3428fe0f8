import {
  counterparties,
  dailyCounterparties,
  dailySummaries,
  dailyTotals,
} from '../../schema/analytics/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { preparedPerDb } from '../kernel/prepared.ts'
import { isTradingParty, normalizePhone, type StoredTransaction, UNCATEGORIZED } from './stored.ts'
import { TRADING_SQL, tx } from './stored-sql.ts'

const dt = sqlNames(dailyTotals)
const ds = sqlNames(dailySummaries)
const dc = sqlNames(dailyCounterparties)
const cp = sqlNames(counterparties)

/** `c = c + excluded.c` for each column: an upsert that adds to the stored sums. */
const addedUp = (...cols: string[]) => cols.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')

/**
 * The rollups beside the transactions table, moved by one transaction at a time: +1 when it is
 * inserted, −1 then +1 when it changes. Rows that fall to zero are deleted. The day and category
 * rollups hold every kind (the balance counts everything; revenue and expenses pick their kinds);
 * the counterparty rollups hold only customers and suppliers (`isTradingParty`).
 */
const DAILY_SQL = `INSERT INTO ${dt.$}
  (${dt.tenantId}, ${dt.day}, ${dt.userId}, ${dt.direction}, ${dt.category}, ${dt.kind}, ${dt.txCount}, ${dt.amountCents})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${dt.tenantId}, ${dt.day}, ${dt.userId}, ${dt.direction}, ${dt.category}, ${dt.kind})
  DO UPDATE SET ${addedUp(dt.txCount, dt.amountCents)}`
const DAY_SQL = `INSERT INTO ${ds.$}
  (${ds.tenantId}, ${ds.day}, ${ds.userId}, ${ds.kind}, ${ds.inCount}, ${ds.inCents}, ${ds.outCount}, ${ds.outCents})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${ds.tenantId}, ${ds.day}, ${ds.userId}, ${ds.kind})
  DO UPDATE SET ${addedUp(ds.inCount, ds.inCents, ds.outCount, ds.outCents)}`
const DAILY_CP_SQL = `INSERT INTO ${dc.$}
  (${dc.tenantId}, ${dc.day}, ${dc.counterpartyKey}, ${dc.direction}, ${dc.txCount}, ${dc.amountCents}, ${dc.lastSeen})
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${dc.tenantId}, ${dc.day}, ${dc.counterpartyKey}, ${dc.direction}) DO UPDATE SET
  ${addedUp(dc.txCount, dc.amountCents)}, ${dc.lastSeen} = max(${dc.lastSeen}, excluded.${dc.lastSeen})`

/**
 * The all-time counterparty upsert: its name follows the latest report that has one; when the
 * stored row is the later one, the stored name stays (or, had it none, takes `nameElse`: the
 * inserted name, or a parameter of pending-rollups.ts's summed rows).
 */
export function counterpartyUpsert(nameElse: string): string {
  return `INSERT INTO ${cp.$}
  (${cp.tenantId}, ${cp.key}, ${cp.name}, ${cp.phone}, ${cp.txCount}, ${cp.totalCents}, ${cp.inCents}, ${cp.outCents}, ${cp.firstSeen}, ${cp.lastSeen})
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
  ON CONFLICT (${cp.tenantId}, ${cp.key}) DO UPDATE SET
  ${cp.name} = CASE WHEN excluded.${cp.lastSeen} >= ${cp.lastSeen} THEN coalesce(excluded.${cp.name}, ${cp.name})
    ELSE coalesce(${cp.name}, ${nameElse}) END,
  ${cp.phone} = coalesce(${cp.phone}, excluded.${cp.phone}),
  ${addedUp(cp.txCount, cp.totalCents, cp.inCents, cp.outCents)},
  ${cp.firstSeen} = min(${cp.firstSeen}, excluded.${cp.firstSeen}),
  ${cp.lastSeen} = max(${cp.lastSeen}, excluded.${cp.lastSeen})`
}
const CP_SQL = counterpartyUpsert(`excluded.${cp.name}`)

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

const PRUNE_CELL = `DELETE FROM ${dt.$} WHERE ${dt.tenantId} = ? AND ${dt.day} = ? AND ${dt.userId} = ?
  AND ${dt.direction} = ? AND ${dt.category} = ? AND ${dt.kind} = ? AND ${dt.txCount} <= 0`
const PRUNE_DAY = `DELETE FROM ${ds.$} WHERE ${ds.tenantId} = ? AND ${ds.day} = ? AND ${ds.userId} = ?
  AND ${ds.kind} = ? AND ${ds.inCount} + ${ds.outCount} <= 0`
const PRUNE_DAY_PARTY = `DELETE FROM ${dc.$} WHERE ${dc.tenantId} = ? AND ${dc.day} = ?
  AND ${dc.counterpartyKey} = ? AND ${dc.direction} = ? AND ${dc.txCount} <= 0`
const PRUNE_PARTY = `DELETE FROM ${cp.$} WHERE ${cp.tenantId} = ? AND ${cp.key} = ? AND ${cp.txCount} <= 0`

/** The row's (day, user, direction, category, kind) cell, removed once it counts nothing. */
function pruneCategoryCell(db: Db, r: StoredTransaction): void {
  db.sqlite.query(PRUNE_CELL).run(...categoryCell(r))
}

/** Rollup rows that fell to zero are removed so `active_days` and customer lists stay exact. */
function pruneDaily(db: Db, r: StoredTransaction): void {
  db.sqlite.query(PRUNE_DAY).run(r.tenant_id, r.local_day, r.user_id ?? '', r.kind ?? '')
  pruneCategoryCell(db, r)
  if (!r.counterparty_key || !isTradingParty(r.kind)) return
  db.sqlite.query(PRUNE_DAY_PARTY).run(r.tenant_id, r.local_day, r.counterparty_key, r.direction)
  db.sqlite.query(PRUNE_PARTY).run(r.tenant_id, r.counterparty_key)
}

/** A counterparty's first or last trading row (`fn` min or max) over all time. */
const seen = (fn: 'min' | 'max') => `(SELECT ${fn}(${tx.occurredAt}) FROM ${tx.$}
  WHERE ${tx.tenantId} = ?1 AND ${tx.counterpartyKey} = ?2 AND ${TRADING_SQL})`
const REFRESH_PARTY = `UPDATE ${cp.$} SET ${cp.firstSeen} = ${seen('min')}, ${cp.lastSeen} = ${seen('max')}
  WHERE ${cp.tenantId} = ?1 AND ${cp.key} = ?2`
const REFRESH_DAY_PARTY = `UPDATE ${dc.$} SET ${dc.lastSeen} = (
    SELECT max(t.${tx.occurredAt}) FROM ${tx.$} t WHERE t.${tx.tenantId} = ?1
      AND t.${tx.occurredAt} >= ?4 AND t.${tx.occurredAt} < ?5 AND t.${tx.localDay} = ?3
      AND t.${tx.counterpartyKey} = ?2 AND t.${tx.direction} = ${dc.$}.${dc.direction}
      AND t.${TRADING_SQL})
  WHERE ${dc.tenantId} = ?1 AND ${dc.direction} IN ('in', 'out') AND ${dc.day} = ?3
    AND ${dc.counterpartyKey} = ?2`

/**
 * first/last seen cannot be subtracted: after a row moved (a rare correction, never a category
 * override) they are read again. The daily cell is re-read through the time index (its local day
 * lies within a day of the instant); the all-time first/last scans that counterparty's rows.
 */
export function refreshCounterparty(db: Db, r: StoredTransaction): void {
  if (!r.counterparty_key || !isTradingParty(r.kind)) return
  const sqlite = db.sqlite
  sqlite.query(REFRESH_PARTY).run(r.tenant_id, r.counterparty_key)
  const at = Date.parse(r.occurred_at)
  sqlite
    .query(REFRESH_DAY_PARTY)
    .run(
      r.tenant_id,
      r.counterparty_key,
      r.local_day,
      new Date(at - 2 * 86_400_000).toISOString(),
      new Date(at + 2 * 86_400_000).toISOString(),
    )
}
