import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * Transactions the parser accepted, whatever door they came through (API, SMS, statement).
 * A receipt number and its leg are unique per tenant: that is the duplicate check (DESIGN §11,
 * §16 "Legs": a payment and its charge share a receipt and are two rows). Amounts in cents.
 */
export const transactions = sqliteTable(
  'transactions',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').primaryKey(),
    receiptNumber: text('receipt_number'),
    occurredAt: text('occurred_at').notNull(),
    amount: integer('amount').notNull(),
    direction: text('direction').notNull(),
    counterpartyName: text('counterparty_name'),
    counterpartyPhone: text('counterparty_phone'),
    description: text('description').notNull(),
    balance: integer('balance'),
    source: text('source').notNull(),
    userId: text('user_id'),
    importId: text('import_id'),
    createdAt: text('created_at').notNull(),
    /** Which leg of its receipt ('' the movement itself; 'charge', 'loan', 'repay'…). */
    leg: text('leg').notNull().default(''),
    /** schema/vocabulary.ts KINDS; null on rows stored before kinds. */
    kind: text('kind'),
  },
  // Only the receipt index: the parser reads its rows by receipt (duplicates, reversals, the
  // ledger) and by id (the plan's count), never by time, and every index costs each import row.
  // WITHOUT ROWID (migration 0004, beyond drizzle-kit): the rows live in the id's B-tree.
  (t) => [uniqueIndex('transactions_receipt_leg').on(t.tenantId, t.receiptNumber, t.leg)],
)

/** One statement upload and what came of it. */
export const imports = sqliteTable(
  'imports',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').primaryKey(),
    fileName: text('file_name'),
    accepted: integer('accepted').notNull(),
    duplicates: integer('duplicates').notNull(),
    rejected: integer('rejected').notNull(),
    skipped: integer('skipped').notNull(),
    userId: text('user_id'),
    createdAt: text('created_at').notNull(),
    /** Rows of the detailed table read: accepted + duplicates + rejected + skipped. */
    read: integer('read'),
    /** The layout recognised (services/parser/layouts.ts). */
    layout: text('layout'),
    /** The statement's proof as the import answered it (JSON), its finding included. */
    proof: text('proof'),
  },
  (t) => [index('imports_tenant').on(t.tenantId, t.createdAt)],
)

/**
 * One ledger (README "One ledger"): the channels that reported a receipt after the first (the
 * stored row's own source). A statement row whose receipt a payment or an SMS reported first is a
 * duplicate that enriches (`matched`); the same channel reporting it again is a plain duplicate.
 * Payments reach `transactions` from `transactions.success`, so the import answer knows them.
 */
export const receiptReports = sqliteTable(
  'receipt_reports',
  {
    tenantId: text('tenant_id').notNull(),
    receiptNumber: text('receipt_number').notNull(),
    source: text('source').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.receiptNumber, t.source] })],
)
