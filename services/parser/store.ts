import { and, count, eq, gte, ne } from 'drizzle-orm'
import { type TransactionEvent, topics } from '../../schema/events.ts'
import { transactions } from '../../schema/parser/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { DEMO_SOURCE } from './demo.ts'
import { kindOf, legOf } from './kinds.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { type RowToWrite, rowWriter } from './store-rows.ts'

export type Source = 'api' | 'sms' | 'statement'

/** Raw batches on the broker carry at most this many transactions (schema/events.ts). */
export const EVENT_BATCH = 1000

export interface StoreInput {
  tenantId: string
  userId: string
  source: Source
  importId?: string | null
  items: Array<{
    transaction: ParsedTransaction
    ref: { row?: number; index?: number }
    /** The new row's id when made beforehand (a statement's reading thread); else made here. */
    id?: string
    /**
     * A leg the reader derived from its report rather than read as a row of its own (the charge
     * an SMS states): stored and sent like any row, counted in `legs`, not in accepted/duplicates.
     */
    derived?: boolean
  }>
  /** Check the plan's transaction limit before committing (off when the caller checked). */
  checkLimit: boolean
  /** Demo rows (demo.ts): stored with source 'demo', neither checked nor metered. */
  demo?: boolean
}

export interface StoreResult {
  accepted: number
  duplicates: number
  /** Of `duplicates`, rows whose receipt another channel reported first (ledger.ts). */
  matched: number
  rejected: number
  errors: RowError[]
  /** Derived legs stored (see `derived`). */
  legs?: number
}

/** A reversed row, read for each reversal of an import (bench/ingest.ts): names from the table. */
const tx = sqlNames(transactions)
const ORIGINAL = `SELECT ${selectList(transactions, ['amount', 'direction', 'counterpartyName', 'counterpartyPhone'])}
  FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.receiptNumber} = ? AND ${tx.leg} = ''`
type Original = Pick<
  typeof transactions.$inferSelect,
  'amount' | 'direction' | 'counterpartyName' | 'counterpartyPhone'
>

/**
 * Stores parsed transactions and, in the same transaction, the raw batch events and the usage
 * event (outbox). A receipt number already stored for the tenant is a duplicate, not an error.
 * One prepared statement for every row: this is the 100,000-row path (DESIGN §14).
 */
export function storeTransactions(ctx: ServiceContext, db: Db, input: StoreInput): StoreResult {
  const now = ctx.clock.now().toISOString()
  return db.write(() => {
    const result: StoreResult = { accepted: 0, duplicates: 0, matched: 0, rejected: 0, errors: [] }
    const events: TransactionEvent[] = []
    const writer = rowWriter({ db, input, now, result, events })
    const original = db.sqlite.query<Original, [string, string]>(ORIGINAL)
    for (const item of input.items) {
      // The reversed row may be among the waiting ones: they go in before it is looked up.
      if (item.transaction.reversalOf) writer.write()
      const row = rowOf({ item, input, original, result })
      if (row) writer.add(row)
    }
    writer.write()
    if (events.length > 0) emitStored({ ctx, db, input, result, events })
    return result
  })
}

/**
 * A parsed transaction as the row and event to store, or null when it cannot be (a reversal of a
 * receipt not known, whose amount is not either: counted and listed as rejected).
 */
function rowOf(args: {
  item: StoreInput['items'][number]
  input: StoreInput
  original: { get(tenantId: string, receipt: string): Original | null }
  result: StoreResult
}): RowToWrite | null {
  const { item, input, original, result } = args
  const { transaction: t, ref, id: madeId, derived } = item
  let { amount, direction, counterpartyName, counterpartyPhone } = t
  if (t.reversalOf) {
    // A reversal moves the reversed amount back the other way, whatever the notice says.
    const o = original.get(input.tenantId, t.reversalOf)
    if (o) {
      amount ??= o.amount
      direction = o.direction === 'in' ? 'out' : 'in'
      counterpartyName ??= o.counterpartyName
      counterpartyPhone ??= o.counterpartyPhone
    }
  }
  if (amount === null) {
    result.rejected++
    result.errors.push({
      ...ref,
      field: 'receipt_number',
      message: `the reversed transaction ${t.reversalOf} is not known, so its amount is not either`,
    })
    return null
  }
  const id = madeId ?? newId('txn')
  const kind = t.kind ?? kindOf(t.reversalOf ? 'reversal' : t.description, direction)
  const leg = t.leg ?? legOf(kind)
  const own = [
    id,
    t.receiptNumber,
    t.occurredAt,
    amount,
    direction,
    counterpartyName,
    counterpartyPhone,
    t.description,
    t.balance,
    leg,
    kind,
  ]
  const event: TransactionEvent = {
    transaction_id: id,
    occurred_at: t.occurredAt,
    amount: toMajor(amount),
    direction,
    counterparty_name: counterpartyName,
    counterparty_phone: counterpartyPhone,
    description: t.description,
    receipt_number: t.receiptNumber,
    balance: t.balance === null ? null : toMajor(t.balance),
    source: input.source,
    user_id: input.userId,
    kind,
  }
  if (leg) event.leg = leg
  if (input.importId) event.import_id = input.importId
  return { event, receipt: t.receiptNumber, own, derived: derived === true }
}

/** The raw batch events of what was stored, and the usage event of what was accepted. */
function emitStored(args: {
  ctx: ServiceContext
  db: Db
  input: StoreInput
  result: StoreResult
  events: TransactionEvent[]
}): void {
  const { ctx, db, input, result, events } = args
  if (input.checkLimit && !input.demo && result.accepted > 0) {
    assertEntitled(ctx.registry, input.tenantId, {
      write: true,
      metric: 'transactions',
      adding: result.accepted,
      ownUse: (since) => acceptedSince(db, input.tenantId, since) - result.accepted,
    })
  }
  for (let i = 0; i < events.length; i += EVENT_BATCH) {
    emitEvent(
      db,
      {
        topic: topics.transactionsRaw,
        tenantId: input.tenantId,
        data: { transactions: events.slice(i, i + EVENT_BATCH) },
      },
      ctx.clock,
    )
  }
  if (input.demo || result.accepted === 0) return
  emitEvent(
    db,
    {
      topic: topics.usage,
      tenantId: input.tenantId,
      data: { metric: 'transactions', quantity: result.accepted },
    },
    ctx.clock,
  )
}

/**
 * Transactions this tenant had accepted since `since` (ISO time), demo rows aside. Ids are UUIDv7
 * underneath, so the id itself orders by creation time and the primary key answers the range.
 */
export function acceptedSince(db: Db, tenantId: string, since: string): number {
  const ms = Date.parse(since)
  if (!Number.isFinite(ms)) return 0
  const boundary = `txn_${ms.toString(16).padStart(12, '0')}`
  const t = transactions
  return (
    db.orm
      .select({ n: count() })
      .from(t)
      .where(and(gte(t.id, boundary), eq(t.tenantId, tenantId), ne(t.source, DEMO_SOURCE)))
      .get()?.n ?? 0
  )
}
