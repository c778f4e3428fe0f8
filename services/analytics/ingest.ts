import type { Db } from '../kernel/db.ts'
import { preparedPerDb, type Statement } from '../kernel/prepared.ts'
import {
  dropCopy,
  holderOf,
  holdersOf,
  recordReports,
  reportValues,
  UPSERT_HEAD,
  UPSERT_TAIL,
} from './ledger.ts'
import { CHUNK, insertedAll, insertMany } from './many-rows.ts'
import { adoptFullPhone } from './masked-payers.ts'
import type { PendingRollups } from './pending-rollups.ts'
import { pendingRollups } from './pending-rollups.ts'
import { addToRollups, moveCategory, refreshCounterparty } from './rollups.ts'
import { entryKey, type StoredTransaction, UNCATEGORIZED } from './stored.ts'
import { readStored, STORED_COLUMNS, STORED_FIELDS, tx } from './stored-sql.ts'

const INSERT_HEAD = `INSERT OR IGNORE INTO ${tx.$} (${STORED_COLUMNS.join(', ')}, ${tx.updatedAt})`
const INSERT_SQL = `${INSERT_HEAD} VALUES (${STORED_COLUMNS.map(() => '?').join(', ')}, ?)`
/** Values a row of INSERT_HEAD takes: the stored columns, then updated_at. */
const WIDTH = STORED_COLUMNS.length + 1
/** The fields an update writes: all but the key (tenant and id lead STORED_FIELDS). */
const UPDATED_FIELDS = STORED_FIELDS.slice(2)
const UPDATE_SQL = `UPDATE ${tx.$} SET ${STORED_COLUMNS.slice(2)
  .map((c) => `${c} = ?`)
  .join(', ')}, ${tx.updatedAt} = ? WHERE ${tx.tenantId} = ? AND ${tx.id} = ?`
const statementsOf = preparedPerDb({ insert: INSERT_SQL, update: UPDATE_SQL })

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
 * `onlyNew` skips known ids (raw transactions never overwrite categorized ones). A ledger entry
 * (receipt and leg) another transaction holds is never inserted twice (ledger.ts).
 */
export function applyTransactions(
  db: Db,
  rows: readonly StoredTransaction[],
  now: string,
  opts: { onlyNew?: boolean } = {},
): ApplyResult {
  const { insert } = statementsOf(db)
  const result: ApplyResult = { inserted: 0, updated: 0, unchanged: 0 }
  // The hot path (every row new): receipts' holders read in one query, rollup increments summed
  // and written once per rollup row. Anything else flushes the sums first (pending-rollups.ts).
  const pending = pendingRollups(db)
  const tenantId = rows[0]?.tenant_id
  // One ledger entry per receipt and leg (DESIGN §16): a payment's charge is held apart from it.
  const keys: Array<string | null> = rows.map(entryKey)
  const held: string[] = []
  for (const key of keys) if (key) held.push(key)
  const holders = tenantId ? holdersOf(db, tenantId, held) : new Map<string, string | null>()
  // An entry twice in the batch: its second row reads the holder the first one left.
  const repeated = held.length > holders.size
  const own = (row: StoredTransaction, i: number) => {
    const key = keys[i]
    const holder = key ? holders.get(key) : null
    return row.tenant_id === tenantId && (holder === null || holder === row.id)
  }
  if (!repeated && rows.every(own)) {
    applyOwn(db, { rows, now, opts, pending, result })
    pending.flush()
    return result
  }
  for (const [i, row] of rows.entries()) {
    const key = keys[i]
    if (key) {
      // One ledger: an entry held by another transaction is that transaction. A raw copy only
      // adds its report; the categorizer's id wins over a raw copy stored before it (a race).
      const known = row.tenant_id === tenantId ? holders.get(key) : undefined
      const holder = known === undefined ? holderOf(db, row.tenant_id, key) : known
      if (repeated) holders.delete(key)
      if (holder !== null && holder !== row.id) {
        adoptFullPhone(db, holder, row, () => pending.flush())
        if (opts.onlyNew) {
          recordReports(db, { row, holder })
          result.unchanged++
          continue
        }
        pending.flush()
        if (dropCopy(db, row.tenant_id, holder))
          recordReports(db, { row, holder: row.id, moved: true })
      } else recordReports(db, { row, holder: row.id })
    }
    if (insertRow(insert, row, now)) {
      pending.add(row)
      result.inserted++
      continue
    }
    if (opts.onlyNew) {
      result.unchanged++
      continue
    }
    updateStored(db, { row, now, pending, result })
  }
  pending.flush()
  return result
}

/**
 * The usual batch: no receipt of it is held by another transaction and none comes twice. Its
 * receipt reports go in first (nothing below reads them), then its rows CHUNK at a time; a row
 * the insert ignored (its id is stored) is then an update, in the batch's order, so the rollups
 * move as they would row by row.
 */
function applyOwn(
  db: Db,
  {
    rows,
    now,
    opts,
    pending,
    result,
  }: {
    rows: readonly StoredTransaction[]
    now: string
    opts: { onlyNew?: boolean }
    pending: PendingRollups
    result: ApplyResult
  },
): void {
  const reports: unknown[] = []
  for (const row of rows) reportValues(row, row.id, reports)
  insertMany(db, { head: UPSERT_HEAD, width: 10, tail: UPSERT_TAIL, values: reports })
  const values: unknown[] = []
  for (let at = 0; at < rows.length; at += CHUNK) {
    const chunk = rows.slice(at, at + CHUNK)
    values.length = 0
    for (const r of chunk) values.push(...rowValues(r, now))
    if (insertedAll(db, INSERT_HEAD, WIDTH, values)) {
      for (const row of chunk) pending.add(row)
      result.inserted += chunk.length
      continue
    }
    // Some id is stored already: row by row, so each ignored one is an update in its turn.
    const { insert } = statementsOf(db)
    for (const row of chunk) {
      if (insertRow(insert, row, now)) {
        pending.add(row)
        result.inserted++
      } else if (opts.onlyNew) result.unchanged++
      else updateStored(db, { row, now, pending, result })
    }
  }
}

/** A categorized row whose id is stored: the row changes and its rollups move with it. */
function updateStored(
  db: Db,
  {
    row,
    now,
    pending,
    result,
  }: { row: StoredTransaction; now: string; pending: PendingRollups; result: ApplyResult },
): void {
  const { update } = statementsOf(db)
  pending.flush()
  const old = readStored(db, row.tenant_id, row.id)!
  if (STORED_FIELDS.every((c) => old[c] === row[c])) {
    result.unchanged++
    return
  }
  update.run(...(UPDATED_FIELDS.map((c) => row[c]) as never[]), now, row.tenant_id, row.id)
  const sameCell =
    old.local_day === row.local_day &&
    old.user_id === row.user_id &&
    old.direction === row.direction &&
    old.amount_cents === row.amount_cents &&
    old.counterparty_key === row.counterparty_key &&
    old.occurred_at === row.occurred_at &&
    old.kind === row.kind
  if (sameCell) {
    if ((old.category ?? UNCATEGORIZED) !== (row.category ?? UNCATEGORIZED)) {
      moveCategory(db, old, row)
    }
    result.updated++
    return
  }
  addToRollups(db, old, -1)
  addToRollups(db, row, 1)
  const cpMoved =
    old.counterparty_key !== row.counterparty_key ||
    old.local_day !== row.local_day ||
    old.occurred_at !== row.occurred_at ||
    old.direction !== row.direction ||
    old.kind !== row.kind
  if (cpMoved) {
    refreshCounterparty(db, old)
    refreshCounterparty(db, row)
  }
  result.updated++
}

/** INSERT_SQL for one row, its values in STORED_COLUMNS order; true when the row was new. */
function insertRow(insert: Statement, r: StoredTransaction, now: string): boolean {
  return insert.run(...(rowValues(r, now) as never[])).changes === 1
}

/** A stored transaction's values in STORED_FIELDS order (INSERT_SQL's, one row or many). */
function rowValues(r: StoredTransaction, now: string): unknown[] {
  return [
    r.tenant_id,
    r.id,
    r.user_id,
    r.occurred_at,
    r.local_day,
    r.amount_cents,
    r.direction,
    r.counterparty_name,
    r.counterparty_phone,
    r.counterparty_key,
    r.description,
    r.receipt_number,
    r.balance_cents,
    r.category,
    r.category_confidence,
    r.category_source,
    r.rule_id,
    r.source,
    r.kind,
    r.leg,
    now,
  ]
}
