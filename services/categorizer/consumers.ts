import { and, eq } from 'drizzle-orm'
import { categorized, learned } from '../../schema/categorizer/tables.ts'
import {
  isInvoicePayment,
  paymentKind,
  type TransactionEvent,
  topics,
} from '../../schema/events.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { NotFound } from '../kernel/errors.ts'
import { emitEvent, handleOnce } from '../kernel/events.ts'
import { subscribe } from '../kernel/subscribe.ts'
import { resolveReport } from './ledger.ts'
import type { TenantStates } from './state.ts'
import { type Category, counterpartyKey, descriptionKey, lessonKey } from './text.ts'

export const CONSUMER = 'categorizer'
const EVENT_BATCH = 1000

/**
 * Run for every consumed transaction (a 100,000-row statement import passes here row by row):
 * prepared once per batch, each name taken from the table.
 */
const c = sqlNames(categorized)
const UPDATED = [
  'description',
  'counterparty',
  'amount',
  'direction',
  'category',
  'confidence',
  'source',
  'ruleId',
  'payload',
  'updatedAt',
] as const
const UPSERT = `INSERT INTO ${c.$} (${c.tenantId}, ${c.id}, ${UPDATED.map((k) => c[k]).join(', ')})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${c.tenantId}, ${c.id}) DO UPDATE SET
  ${UPDATED.map((k) => `${c[k]} = excluded.${c[k]}`).join(', ')}
  WHERE ${c.$}.${c.source} != 'override'`

function emitCategorized(db: Db, ctx: ServiceContext, tenantId: string, out: TransactionEvent[]) {
  for (let i = 0; i < out.length; i += EVENT_BATCH) {
    emitEvent(
      db,
      {
        topic: topics.transactionsCategorized,
        tenantId,
        data: { transactions: out.slice(i, i + EVENT_BATCH) },
      },
      ctx.clock,
    )
  }
}

/** Raw batches (parser) and single payments (payment service) in; categorized batches out. */
export async function subscribeCategorizer(ctx: ServiceContext, states: TenantStates) {
  await subscribe(ctx, CONSUMER, topics.transactionsRaw, (event) => {
    consumeTransactions(ctx, states, event, event.data.transactions)
  })
  await subscribe(ctx, CONSUMER, topics.transactionsSuccess, (event) => {
    // A tenant paying the platform's invoice is billing's business, not the tenant's income.
    if (isInvoicePayment(event.data)) return
    consumeTransactions(ctx, states, event, [event.data])
  })
}

/**
 * Categorizes consumed transactions once per event id: stores each with its category and emits
 * the categorized batch in the same transaction. A transaction a user already overrode keeps its
 * category when it arrives again. A ledger entry (receipt and leg) another channel reported first
 * is not a new transaction: it is merged into that one and published under its id (ledger.ts).
 * Every published transaction has a kind: the one a report stated, else a payment's by its
 * channel and direction; the kind bounds its category (kinds.ts).
 */
export function consumeTransactions(
  ctx: ServiceContext,
  states: TenantStates,
  event: { id: string; tenant_id: string },
  transactions: readonly TransactionEvent[],
): boolean {
  const tenantId = event.tenant_id
  const db = ctx.registry.tenant('categorizer', tenantId)
  const categorizer = states.get(tenantId)
  return handleOnce(db, CONSUMER, event.id, () => {
    const upsert = db.sqlite.query(UPSERT)
    const now = ctx.clock.now().toISOString()
    const out: TransactionEvent[] = []
    for (const report of transactions) {
      const t = resolveReport(db, tenantId, report)
      // The payload keeps the kinds reports stated, so a statement's kind can still win over a
      // payment's default; what goes out always has one.
      const kind = t.kind ?? paymentKind(t)
      const r = categorizer.categorize(t.kind ? t : { ...t, kind })
      upsert.run(
        tenantId,
        t.transaction_id,
        t.description,
        t.counterparty_name ?? null,
        Math.round(t.amount * 100),
        t.direction,
        r.category,
        r.confidence,
        r.source,
        r.rule_id,
        JSON.stringify(t),
        now,
      )
      out.push({
        ...t,
        kind,
        category: r.category,
        category_confidence: r.confidence,
        category_source: r.source,
        rule_id: r.rule_id,
      })
    }
    emitCategorized(db, ctx, tenantId, out)
  })
}

/**
 * A manual override: sticks to the transaction, is published as a new categorized message, and
 * teaches — later transactions of the same counterparty or description follow it, and the
 * tenant's model is retrained.
 */
export function overrideCategory(
  ctx: ServiceContext,
  states: TenantStates,
  input: { tenantId: string; userId: string; transactionId: string; category: Category },
): TransactionEvent {
  const { tenantId, transactionId, category } = input
  const db = ctx.registry.tenant('categorizer', tenantId)
  const row = db.orm
    .select()
    .from(categorized)
    .where(and(eq(categorized.tenantId, tenantId), eq(categorized.id, transactionId)))
    .get()
  if (!row) throw new NotFound('transaction', transactionId)
  const original = JSON.parse(row.payload) as TransactionEvent
  const now = ctx.clock.now().toISOString()
  const updated: TransactionEvent = {
    ...original,
    kind: original.kind ?? paymentKind(original),
    category,
    category_confidence: 1,
    category_source: 'override',
    rule_id: null,
  }
  db.write((orm) => {
    orm
      .update(categorized)
      .set({ category, confidence: 1, source: 'override', ruleId: null, updatedAt: now })
      .where(and(eq(categorized.tenantId, tenantId), eq(categorized.id, transactionId)))
      .run()
    const lessons: Array<[string, string | null]> = [
      ['counterparty', counterpartyKey(original.counterparty_name, original.counterparty_phone)],
      ['description', descriptionKey(original.description) || null],
    ]
    const d = original.direction
    for (const [kind, key] of lessons) {
      if (!key) continue
      const values = { category, transactionId, userId: input.userId, updatedAt: now }
      orm
        .insert(learned)
        .values({ tenantId, kind, key: lessonKey(d, key), ...values })
        .onConflictDoUpdate({ target: [learned.tenantId, learned.kind, learned.key], set: values })
        .run()
    }
    emitCategorized(db, ctx, tenantId, [updated])
  })
  states.invalidate(tenantId, { retrain: true })
  return updated
}
