import { type TransactionEvent, topics } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { DEMO_SOURCE } from './demo.ts'
import { matchReport } from './ledger.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'

export type Source = 'api' | 'sms' | 'statement'

/** Raw batches on the broker carry at most this many transactions (schema/events.ts). */
export const EVENT_BATCH = 1000

export interface StoreInput {
  tenantId: string
  userId: string
  source: Source
  importId?: string | null
  items: Array<{ transaction: ParsedTransaction; ref: { row?: number; index?: number } }>
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
}

const INSERT = `INSERT OR IGNORE INTO transactions (tenant_id, id, receipt_number, occurred_at, amount,
  direction, counterparty_name, counterparty_phone, description, balance, source, user_id, import_id,
  created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const ORIGINAL = `SELECT amount, direction, counterparty_name, counterparty_phone FROM transactions
  WHERE tenant_id = ? AND receipt_number = ?`

interface Original {
  amount: number
  direction: 'in' | 'out'
  counterparty_name: string | null
  counterparty_phone: string | null
}

/**
 * Stores parsed transactions and, in the same transaction, the raw batch events and the usage
 * event (outbox). A receipt number already stored for the tenant is a duplicate, not an error.
 * One prepared statement for every row: this is the 100,000-row path (DESIGN §14).
 */
export function storeTransactions(ctx: ServiceContext, db: Db, input: StoreInput): StoreResult {
  const now = ctx.clock.now().toISOString()
  return db.write(() => {
    const insert = db.sqlite.query(INSERT)
    const original = db.sqlite.query<Original, [string, string]>(ORIGINAL)
    const result: StoreResult = { accepted: 0, duplicates: 0, matched: 0, rejected: 0, errors: [] }
    const events: TransactionEvent[] = []
    for (const { transaction: t, ref } of input.items) {
      let { amount, direction, counterpartyName, counterpartyPhone } = t
      if (t.reversalOf) {
        // A reversal moves the reversed amount back the other way, whatever the notice says.
        const o = original.get(input.tenantId, t.reversalOf)
        if (o) {
          amount ??= o.amount
          direction = o.direction === 'in' ? 'out' : 'in'
          counterpartyName ??= o.counterparty_name
          counterpartyPhone ??= o.counterparty_phone
        }
      }
      if (amount === null) {
        result.rejected++
        result.errors.push({
          ...ref,
          field: 'receipt_number',
          message: `the reversed transaction ${t.reversalOf} is not known, so its amount is not either`,
        })
        continue
      }
      const id = newId('txn')
      const res = insert.run(
        input.tenantId,
        id,
        t.receiptNumber,
        t.occurredAt,
        amount,
        direction,
        counterpartyName,
        counterpartyPhone,
        t.description,
        t.balance,
        input.demo ? DEMO_SOURCE : input.source,
        input.userId,
        input.importId ?? null,
        now,
      )
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
      }
      if (input.importId) event.import_id = input.importId
      if (res.changes === 0) {
        result.duplicates++
        // Another channel's receipt: no new transaction, but what this report adds (a statement's
        // balance and Details) goes out under that transaction's id, unmetered.
        const owner = matchReport(db, input.tenantId, t.receiptNumber!, input.source)
        if (owner) {
          result.matched++
          events.push({ ...event, transaction_id: owner, matched: true })
        }
        continue
      }
      result.accepted++
      events.push(event)
    }
    if (events.length === 0) return result
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
    if (input.demo || result.accepted === 0) return result
    emitEvent(
      db,
      {
        topic: topics.usage,
        tenantId: input.tenantId,
        data: { metric: 'transactions', quantity: result.accepted },
      },
      ctx.clock,
    )
    return result
  })
}

/**
 * Transactions this tenant had accepted since `since` (ISO time), demo rows aside. Ids are UUIDv7
 * underneath, so the id itself orders by creation time and the primary key answers the range.
 */
export function acceptedSince(db: Db, tenantId: string, since: string): number {
  const ms = Date.parse(since)
  if (!Number.isFinite(ms)) return 0
  const boundary = `txn_${ms.toString(16).padStart(12, '0')}`
  return (
    db.sqlite
      .query<{ n: number }, [string, string]>(
        `SELECT count(*) AS n FROM transactions WHERE id >= ? AND tenant_id = ? AND source != '${DEMO_SOURCE}'`,
      )
      .get(boundary, tenantId)?.n ?? 0
  )
}
