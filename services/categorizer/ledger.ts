import { categorized, receipts } from '../../schema/categorizer/tables.ts'
import { ledgerKey, reportOf, type TransactionEvent } from '../../schema/events.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'

/**
 * A later report of the same ledger entry (receipt and leg) enriches the first and never replaces
 * what the first said about the money (amount, direction, time: a disagreement is the
 * reconciliation view's to show). The statement is the provider's own record: its Details text,
 * running balance and kind win. A kind any report stated is kept (a payment states none; its
 * default is given when it is published, consume.ts). One report per source is kept, the latest.
 */
export function mergeReports(first: TransactionEvent, later: TransactionEvent): TransactionEvent {
  const reports = (first.reports ?? [reportOf(first)]).filter((r) => r.source !== later.source)
  reports.push(reportOf(later))
  const leg = first.leg || later.leg
  if (later.transaction_id === first.transaction_id && later.source === first.source) {
    // The same report again (or corrected by its own channel): as before the ledger, it wins.
    const { matched: _, ...again } = later
    const kind = later.kind ?? first.kind
    return { ...again, ...(kind ? { kind } : {}), ...(leg ? { leg } : {}), reports }
  }
  const statement = later.source === 'statement'
  const kind = (statement ? later.kind : undefined) ?? first.kind ?? later.kind
  return {
    ...first,
    ...(kind ? { kind } : {}),
    ...(leg ? { leg } : {}),
    description: statement ? later.description : first.description,
    counterparty_name: first.counterparty_name ?? later.counterparty_name ?? null,
    counterparty_phone: first.counterparty_phone ?? later.counterparty_phone ?? null,
    balance:
      statement && later.balance != null ? later.balance : (first.balance ?? later.balance ?? null),
    ...pick(first, later, 'checkout_request_id'),
    ...pick(first, later, 'account_reference'),
    ...pick(first, later, 'channel'),
    ...pick(first, later, 'purpose'),
    import_id: later.import_id ?? first.import_id ?? null,
    reports,
  }
}

function pick<K extends 'checkout_request_id' | 'account_reference' | 'channel' | 'purpose'>(
  first: TransactionEvent,
  later: TransactionEvent,
  key: K,
): Partial<Pick<TransactionEvent, K>> {
  const value = first[key] ?? later[key]
  return value === undefined ? {} : ({ [key]: value } as Partial<Pick<TransactionEvent, K>>)
}

/** Asked for every consumed report with a receipt (row by row of an import): names from the tables. */
const r = sqlNames(receipts)
const c = sqlNames(categorized)
const CLAIM = `INSERT OR IGNORE INTO ${r.$} (${r.tenantId}, ${r.receiptNumber}, ${r.transactionId})
  VALUES (?, ?, ?)`
const OWNER = `SELECT ${r.transactionId} AS id FROM ${r.$}
  WHERE ${r.tenantId} = ? AND ${r.receiptNumber} = ?`
const PAYLOAD = `SELECT ${c.payload} AS payload FROM ${c.$} WHERE ${c.tenantId} = ? AND ${c.id} = ?`

/**
 * The transaction a consumed report belongs to: the first report of its ledger entry names it
 * (claimed in the receipts table inside the caller's write transaction, so two channels reporting
 * the same entry at once still make one), and the stored transaction absorbs this report. An
 * entry is a receipt and its leg (`ledgerKey`, DESIGN §16): a payment's charge or the Fuliza draw
 * under its receipt is an entry of its own, while an STK payment and its statement row (leg '')
 * are one. A transaction without a receipt number is its own.
 */
export function resolveReport(db: Db, tenantId: string, t: TransactionEvent): TransactionEvent {
  const receipt = t.receipt_number?.trim()
  if (!receipt) return t
  const key = ledgerKey(receipt, t.leg)
  db.sqlite.query(CLAIM).run(tenantId, key, t.transaction_id)
  const owner =
    db.sqlite.query<{ id: string }, [string, string]>(OWNER).get(tenantId, key)?.id ??
    t.transaction_id
  const stored = db.sqlite
    .query<Pick<typeof categorized.$inferSelect, 'payload'>, [string, string]>(PAYLOAD)
    .get(tenantId, owner)?.payload
  if (!stored) return { ...t, transaction_id: owner, reports: [reportOf(t)] }
  return mergeReports(JSON.parse(stored) as TransactionEvent, t)
}
