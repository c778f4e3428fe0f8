import { index, integer, primaryKey, real, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * Every transaction the analytics service has seen, per tenant and user. Money in cents.
 * `occurred_at` is ISO 8601 UTC with milliseconds so text order is time order; `local_day` is the
 * day in the tenant's time zone; `counterparty_key` groups a counterparty (phone digits, else name).
 * `kind` is what the entry is (schema/vocabulary.ts KINDS; rows from before kinds were given a
 * payment's kind by direction) and `leg` which leg of its receipt it is ('' the movement itself).
 */
export const transactions = sqliteTable(
  'transactions',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').notNull(),
    userId: text('user_id'),
    occurredAt: text('occurred_at').notNull(),
    localDay: text('local_day').notNull(),
    amountCents: integer('amount_cents').notNull(),
    direction: text('direction').notNull(),
    counterpartyName: text('counterparty_name'),
    counterpartyPhone: text('counterparty_phone'),
    counterpartyKey: text('counterparty_key'),
    description: text('description').notNull(),
    receiptNumber: text('receipt_number'),
    balanceCents: integer('balance_cents'),
    category: text('category'),
    categoryConfidence: real('category_confidence'),
    categorySource: text('category_source'),
    ruleId: text('rule_id'),
    source: text('source').notNull(),
    updatedAt: text('updated_at').notNull(),
    kind: text('kind'),
    leg: text('leg').notNull().default(''),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    // Only the time index: a (counterparty, time) index made every insert land on one of
    // thousands of B-tree spots and cut ingest 5×; counterparty reads use the rollups instead.
    index('transactions_time').on(t.tenantId, t.occurredAt, t.id),
  ],
)

/**
 * Daily rollup by (tenant, local day, user, direction, category, kind): what the category
 * breakdowns and insights read, so they cost O(days). `user_id` is '' for transactions without a
 * user. The kind tells a Fuliza repayment filed under Other from money spent. Rows at zero are
 * deleted.
 */
export const dailyTotals = sqliteTable(
  'daily_totals',
  {
    tenantId: text('tenant_id').notNull(),
    day: text('day').notNull(),
    userId: text('user_id').notNull(),
    direction: text('direction').notNull(),
    category: text('category').notNull(),
    txCount: integer('tx_count').notNull(),
    amountCents: integer('amount_cents').notNull(),
    kind: text('kind').notNull().default(''),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.userId, t.direction, t.category, t.kind] })],
)

/**
 * Daily rollup by counterparty: customers and insights over a date range. Keyed direction first,
 * so the key is what insights reads (one direction's rows in day order: the table is WITHOUT
 * ROWID, so the key's B-tree holds every column) and no second index is written per row; reads
 * of both directions name them (`direction IN ('in', 'out')`) to seek by day in each. Day-clustered
 * within a direction, so inserts stay local.
 */
export const dailyCounterparties = sqliteTable(
  'daily_counterparties',
  {
    tenantId: text('tenant_id').notNull(),
    day: text('day').notNull(),
    counterpartyKey: text('counterparty_key').notNull(),
    direction: text('direction').notNull(),
    txCount: integer('tx_count').notNull(),
    amountCents: integer('amount_cents').notNull(),
    lastSeen: text('last_seen').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.direction, t.day, t.counterpartyKey] })],
)

/** One row per counterparty over all time: top customers and RFM without touching transactions. */
export const counterparties = sqliteTable(
  'counterparties',
  {
    tenantId: text('tenant_id').notNull(),
    key: text('key').notNull(),
    name: text('name'),
    phone: text('phone'),
    txCount: integer('tx_count').notNull(),
    totalCents: integer('total_cents').notNull(),
    inCents: integer('in_cents').notNull(),
    outCents: integer('out_cents').notNull(),
    firstSeen: text('first_seen').notNull(),
    lastSeen: text('last_seen').notNull(),
  },
  // No index on the total: every read takes the tenant's whole list and sorts it, and an index
  // on a sum moved on every insert.
  (t) => [primaryKey({ columns: [t.tenantId, t.key] })],
)

/**
 * Daily rollup by (tenant, local day, user, kind) with money in and out: the summary and trends
 * read only this (days × users × kinds rows), never the per-category cells; revenue, expenses and
 * the breakdown by kind come from its kinds.
 */
export const dailySummaries = sqliteTable(
  'daily_summaries',
  {
    tenantId: text('tenant_id').notNull(),
    day: text('day').notNull(),
    userId: text('user_id').notNull(),
    inCount: integer('in_count').notNull(),
    inCents: integer('in_cents').notNull(),
    outCount: integer('out_count').notNull(),
    outCents: integer('out_cents').notNull(),
    kind: text('kind').notNull().default(''),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.userId, t.kind] })],
)

/**
 * One ledger (README "One ledger"): what each channel reported of a ledger entry (the
 * categorizer's `reports`, or a raw row's own), and which transaction holds the entry here.
 * `receipt_number` holds the entry's `ledgerKey` (schema/events.ts): the bare receipt for the
 * movement itself (as every row written before legs), `receipt/leg` for a charge, a loan drawn
 * or a repayment under the same receipt. Reconciliation
 * reads it; ingest asks it whether a receipt is already held, so a second channel's copy never
 * becomes a second transaction. Money in cents.
 */
export const receiptReports = sqliteTable(
  'receipt_reports',
  {
    tenantId: text('tenant_id').notNull(),
    receiptNumber: text('receipt_number').notNull(),
    source: text('source').notNull(),
    channel: text('channel'),
    transactionId: text('transaction_id').notNull(),
    occurredAt: text('occurred_at').notNull(),
    amountCents: integer('amount_cents').notNull(),
    direction: text('direction').notNull(),
    balanceCents: integer('balance_cents'),
    importId: text('import_id'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.receiptNumber, t.source] }),
    index('receipt_reports_time').on(t.tenantId, t.source, t.occurredAt),
  ],
)
