import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * One row per transaction the cashflow service has seen, so a later categorized message for the
 * same transaction (a category override) can move its amount between categories. Amounts in cents;
 * `day` is the transaction's date in the tenant's time zone.
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
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('cashflow_transactions_day').on(t.tenantId, t.day),
  ],
)

/** The per-tenant daily series by category (cents), kept up to date on every ingest. */
export const cashflowDaily = sqliteTable(
  'cashflow_daily',
  {
    tenantId: text('tenant_id').notNull(),
    day: text('day').notNull(),
    category: text('category').notNull(),
    inflow: integer('inflow').notNull(),
    outflow: integer('outflow').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.category] })],
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
