import type { TransactionEvent } from '../../schema/events.ts'
import { transactions } from '../../schema/parser/tables.ts'
import { type ColumnKey, selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { DEMO_SOURCE } from './demo.ts'
import { matchReport } from './ledger.ts'

/** The import's statements (bench/ingest.ts measures them): names from the drizzle table. */
const tx = sqlNames(transactions)
type TransactionRow = typeof transactions.$inferSelect

/** The inserted columns, in the order of `rowAt`'s values (a row's `own` values are 2nd to 12th). */
const INSERTED = [
  'tenantId',
  'id',
  'receiptNumber',
  'occurredAt',
  'amount',
  'direction',
  'counterpartyName',
  'counterpartyPhone',
  'description',
  'balance',
  'leg',
  'kind',
  'source',
  'userId',
  'importId',
  'createdAt',
] as const satisfies readonly ColumnKey<typeof transactions>[]
const COLUMNS = INSERTED.map((key) => tx[key]).join(', ')
/**
 * What every row of one call shares (tenant_id, source, user_id, import_id, created_at) is bound
 * once a statement as ?1 to ?5, and each row pushes and binds only its own PER_ROW values after
 * them: 455 values for 50 rows instead of 700 (100,000 rows went in 6 to 28 % faster).
 */
const SHARED = 5
const PER_ROW = 11
const rowAt = (k: number) => {
  const own = Array.from({ length: PER_ROW }, (_, i) => `?${SHARED + 1 + k * PER_ROW + i}`)
  return `(?1, ${own.join(', ')}, ?2, ?3, ?4, ?5)`
}
const INSERT = `INSERT OR IGNORE INTO ${tx.$} (${COLUMNS}) VALUES ${rowAt(0)}`
/**
 * Rows per execution of the many-row insert: one statement execution for 50 rows costs SQLite one
 * start (cursors opened on the table and its receipt index) and bun:sqlite one call instead of 50.
 */
const CHUNK = 50
const INSERT_CHUNK = `INSERT OR IGNORE INTO ${tx.$} (${COLUMNS}) VALUES ${Array.from(
  { length: CHUNK },
  (_, k) => rowAt(k),
).join(', ')}`
const EXISTS = `SELECT 1 AS x FROM ${tx.$} WHERE ${tx.id} = ?`

/**
 * The row that holds a receipt's leg: to tell a report of it from another leg of the same kind,
 * and to count a statement's new rows against a finite plan (import-statement.ts).
 */
export const RECEIPT_LEG = `SELECT ${selectList(transactions, ['amount', 'direction'])} FROM ${tx.$}
  WHERE ${tx.tenantId} = ? AND ${tx.receiptNumber} = ? AND ${tx.leg} = ?`

/** Who stores the rows (store.ts `StoreInput`). */
interface WriterInput {
  tenantId: string
  userId: string
  source: string
  importId?: string | null
  demo?: boolean
}

/** What the rows came to (store.ts `StoreResult`). */
interface Tally {
  accepted: number
  duplicates: number
  matched: number
  legs?: number
}

/** One row to insert: its own column values (after the shared ones) and its event. */
export interface RowToWrite {
  event: TransactionEvent
  receipt: string | null
  own: unknown[]
  derived: boolean
}

/**
 * Inserts rows CHUNK at a time with one statement; a row the insert ignored (its receipt's leg
 * was stored already) is then a further leg, a report of the same movement (matched across
 * channels) or a duplicate, settled in the order the rows came.
 */
export function rowWriter(deps: {
  db: Db
  input: WriterInput
  now: string
  result: Tally
  events: TransactionEvent[]
}) {
  const { db, input, result, events } = deps
  // Looked up once per call: bun:sqlite caches 20 statements a connection, and past that
  // `query()` would compile the 50-row insert again for every 50 rows.
  const insert = db.sqlite.query(INSERT)
  const insertChunk = db.sqlite.query(INSERT_CHUNK)
  const legHolder = db.sqlite.query<
    Pick<TransactionRow, 'amount' | 'direction'>,
    [string, string, string]
  >(RECEIPT_LEG)
  const shared = [
    input.tenantId,
    input.demo ? DEMO_SOURCE : input.source,
    input.userId,
    input.importId ?? null,
    deps.now,
  ]
  const waiting: RowToWrite[] = []
  const values: unknown[] = [...shared]
  const settle = (row: RowToWrite, inserted: boolean) => {
    let { event } = row
    const { receipt, own, derived } = row
    if (!inserted && receipt) {
      // The receipt's leg is held already. By the same movement (amount and direction): a
      // report of it. By another: a further leg of the same kind under one receipt (two
      // repayments, say), kept under a leg that names its amount and direction. The movement
      // itself ('' leg) reported in the same direction with another amount is the same
      // movement told differently: a duplicate, which reconciliation shows as a mismatch.
      const leg = event.leg ?? ''
      const held = legHolder.get(input.tenantId, receipt, leg)
      const cents = own[3] as number
      const other =
        held && (held.direction !== event.direction || (leg !== '' && held.amount !== cents))
      if (other) {
        const further = `${leg}~${event.direction}${cents}`
        own[9] = further
        event = { ...event, leg: further }
        inserted = insert.run([...shared, ...own] as never).changes === 1
      }
    }
    if (inserted) {
      if (derived) result.legs = (result.legs ?? 0) + 1
      else result.accepted++
      events.push(event)
      return
    }
    if (derived) return
    result.duplicates++
    // Another channel's receipt: no new transaction, but what this report adds (a statement's
    // balance and Details) goes out under that transaction's id, unmetered.
    const owner = matchReport(db, {
      tenantId: input.tenantId,
      receipt: receipt!,
      source: input.source,
      leg: event.leg ?? '',
    })
    if (owner) {
      result.matched++
      events.push({ ...event, transaction_id: owner, matched: true })
    }
  }
  const write = () => {
    const n = waiting.length
    if (n === CHUNK) {
      // One array binds every value (bun:sqlite takes a lone array as the bindings): spreading
      // 700 arguments a call cost a tenth of the insert.
      const changes = insertChunk.run(values as never).changes
      // Ids are new, so a row of this chunk that is in the table now is one it inserted.
      const exists = changes === 0 || changes === n ? null : db.sqlite.query(EXISTS)
      for (const w of waiting) {
        settle(w, exists ? !!exists.get(w.event.transaction_id) : changes === n)
      }
    } else {
      for (const w of waiting) settle(w, insert.run([...shared, ...w.own] as never).changes === 1)
    }
    waiting.length = 0
    values.length = SHARED
  }
  return {
    write,
    add(row: RowToWrite) {
      for (const v of row.own) values.push(v)
      waiting.push(row)
      if (waiting.length === CHUNK) write()
    },
  }
}
