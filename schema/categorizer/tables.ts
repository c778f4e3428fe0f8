import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/** A tenant's own categorization rules (the built-in defaults live in code). Amounts in cents. */
export const rules = sqliteTable(
  'rules',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    match: text('match').notNull(),
    pattern: text('pattern').notNull(),
    category: text('category').notNull(),
    priority: integer('priority').notNull(),
    confidence: real('confidence').notNull(),
    direction: text('direction'),
    minAmount: integer('min_amount'),
    maxAmount: integer('max_amount'),
    counterparty: text('counterparty'),
    active: integer('active', { mode: 'boolean' }).notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('rules_tenant').on(t.tenantId)],
)

/** Every transaction the categorizer consumed, with its current category. */
export const categorized = sqliteTable(
  'categorized',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').notNull(),
    description: text('description').notNull(),
    counterparty: text('counterparty'),
    amount: integer('amount').notNull(),
    direction: text('direction').notNull(),
    category: text('category').notNull(),
    confidence: real('confidence').notNull(),
    source: text('source').notNull(),
    ruleId: text('rule_id'),
    /** The TransactionEvent as it arrived, to re-emit it on an override. */
    payload: text('payload').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
)

/**
 * What manual overrides taught: a counterparty or a normalised description that now maps to a
 * category. The latest override of a key wins.
 */
export const learned = sqliteTable(
  'learned',
  {
    tenantId: text('tenant_id').notNull(),
    kind: text('kind').notNull(),
    key: text('key').notNull(),
    category: text('category').notNull(),
    transactionId: text('transaction_id').notNull(),
    userId: text('user_id'),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.kind, t.key] })],
)

/**
 * One ledger (README "One ledger"): the transaction a ledger entry belongs to. `receipt_number`
 * holds the entry's `ledgerKey` (schema/events.ts): the bare receipt for the movement itself (so
 * rows written before legs existed are already right), `receipt/leg` for its charge, loan drawn
 * or repayment. The first report of an entry, whatever its channel, names the transaction; later
 * reports enrich it.
 */
export const receipts = sqliteTable(
  'receipts',
  {
    tenantId: text('tenant_id').notNull(),
    receiptNumber: text('receipt_number').notNull(),
    transactionId: text('transaction_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.receiptNumber] })],
)
