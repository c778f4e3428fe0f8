import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * One row per transaction the cashflow service has seen, so a later categorized message for the
 * same transaction (a category override) can move its amount between categories. Amounts in cents;
 * `day` is the transaction's date in the tenant's time zone; `kind` the event's (schema/vocabulary.ts
 * KINDS), null for an older event that carried none.
 */
export const cashflowTransactions = sqliteTable(
  'cashflow_transactions',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').notNull(),
    day: text('day').notNull(),
    occurredAt: text('occurred_at').notNull(),
    direction: text('direction').notNull(),
    category: text('category').notNull(),
    amount: integer('amount').notNull(),
    balance: integer('balance'),
    counterparty: text('counterparty'),
    kind: text('kind'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('cashflow_transactions_day').on(t.tenantId, t.day),
  ],
)

/**
 * The per-tenant daily series by category and kind (cents), kept up to date on every ingest.
 * `kind` '' holds older events without a kind: money in counts as revenue, money out as expense.
 */
export const cashflowDaily = sqliteTable(
  'cashflow_daily',
  {
    tenantId: text('tenant_id').notNull(),
    day: text('day').notNull(),
    category: text('category').notNull(),
    kind: text('kind').notNull().default(''),
    inflow: integer('inflow').notNull(),
    outflow: integer('outflow').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.category, t.kind] })],
)

/**
 * Per-tenant state: the latest known balance (from the transaction with the latest occurred_at
 * that carried one), the low-balance threshold, and whether the balance or its forecast is already
 * below it, so the alert fires once per crossing.
 */
export const cashflowState = sqliteTable('cashflow_state', {
  tenantId: text('tenant_id').primaryKey(),
  balance: integer('balance'),
  balanceAt: text('balance_at'),
  lowBalanceThreshold: integer('low_balance_threshold'),
  balanceBelow: integer('balance_below').notNull().default(0),
  forecastBelow: integer('forecast_below').notNull().default(0),
  updatedAt: text('updated_at').notNull(),
})

/**
 * The latest statement import's proof per tenant (`mobilemoney.statements.processed`): a statement
 * that does not add up keeps the tenant's health from being called healthy (DESIGN §16).
 */
export const cashflowDataQuality = sqliteTable('cashflow_data_quality', {
  tenantId: text('tenant_id').primaryKey(),
  importId: text('import_id').notNull(),
  fileName: text('file_name'),
  verdict: text('verdict').notNull(),
  finding: text('finding'),
  /** The event's occurred_at: a redelivered older import never replaces a newer one. */
  processedAt: text('processed_at').notNull(),
  updatedAt: text('updated_at').notNull(),
})
