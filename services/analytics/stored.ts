import type { transactions } from '../../schema/analytics/tables.ts'
import {
  ledgerKey,
  paymentKind,
  type ReceiptReport,
  reportOf,
  type TransactionEvent,
} from '../../schema/events.ts'
import { KIND_ROLE, type Kind } from '../../schema/vocabulary.ts'
import { toMinor } from '../kernel/money.ts'
import type { SnakeFields } from '../kernel/snake.ts'
import type { TimeZone } from '../kernel/time-zone.ts'
import { toIsoInstant } from './range.ts'

/** Rollup key for a transaction without a category. */
export const UNCATEGORIZED = 'Uncategorized'

type Columns = typeof transactions.$inferSelect

/**
 * The stored shape of one transaction: the table's columns under their SQL names (snake_case), as
 * the ingest's raw SQL reads and writes them, so a column renamed in the table fails to compile here.
 */
export type StoredTransaction = Omit<
  SnakeFields<Columns, Exclude<keyof Columns, 'updatedAt'>>,
  'direction'
> & {
  direction: 'in' | 'out'
  /** Every channel's report of its entry (not a column: receipt_reports, ledger.ts). */
  reports?: readonly ReceiptReport[]
}

/**
 * Converts one broker transaction (its shape checked against schema/events.ts on arrival) to its
 * stored row; throws when its time or amount cannot be stored.
 */
export function toStored(tenantId: string, zone: TimeZone, e: TransactionEvent): StoredTransaction {
  const occurredAt = toIsoInstant(e.occurred_at, 'occurred_at')
  const amount = toMinor(e.amount, 'amount')
  if (amount < 0) throw new Error('amount must not be negative')
  return {
    tenant_id: tenantId,
    id: e.transaction_id,
    user_id: e.user_id ?? null,
    occurred_at: occurredAt,
    local_day: dayOf(zone, Date.parse(occurredAt)),
    amount_cents: amount,
    direction: e.direction,
    counterparty_name: e.counterparty_name ?? null,
    counterparty_phone: e.counterparty_phone ?? null,
    counterparty_key: counterpartyKey(e.counterparty_name, e.counterparty_phone),
    description: e.description ?? '',
    receipt_number: e.receipt_number ?? null,
    balance_cents: e.balance == null ? null : Math.round(e.balance * 100),
    category: e.category ?? null,
    category_confidence: e.category_confidence ?? null,
    category_source: e.category_source ?? null,
    rule_id: e.rule_id ?? null,
    source: e.source ?? 'api',
    // A payment (or an older event) states no kind: its channel and direction say it.
    kind: e.kind ?? paymentKind(e),
    leg: e.leg ?? '',
    reports: e.reports ?? (e.receipt_number ? [reportOf(e)] : undefined),
  }
}

const QUARTER_HOUR = 900_000
const daysOf = new WeakMap<TimeZone, Map<number, string>>()

/**
 * `zone.dayOf`, remembered per quarter hour (the kernel's zone holds one offset through each):
 * a batch's rows share a few quarter hours. One that straddles a local midnight (an offset that
 * is not whole quarter hours) is asked about each instant.
 */
function dayOf(zone: TimeZone, ms: number): string {
  let days = daysOf.get(zone)
  if (!days) {
    days = new Map()
    daysOf.set(zone, days)
  }
  const bucket = Math.floor(ms / QUARTER_HOUR)
  let day = days.get(bucket)
  if (day === undefined) {
    day = zone.dayOf(bucket * QUARTER_HOUR)
    if (zone.dayOf(bucket * QUARTER_HOUR + QUARTER_HOUR - 1) !== day) return zone.dayOf(ms)
    if (days.size > 100_000) days.clear()
    days.set(bucket, day)
  }
  return day
}

/** Phone digits in international form (a leading 0 becomes Kenya's 254). */
export function normalizePhone(phone: string | null | undefined): string | null {
  if (!phone) return null
  let digits = phone.replace(/\D/g, '')
  if (digits.length === 10 && digits.startsWith('0')) digits = `254${digits.slice(1)}`
  if (digits.length === 9 && /^[17]/.test(digits)) digits = `254${digits}`
  return digits.length >= 6 ? digits : null
}

/**
 * Groups a counterparty: by phone when known, otherwise by its name, case and spaces folded. A
 * masked phone (C2B's `2547 ***** 126`) is shared by many people: it groups with the name.
 */
export function counterpartyKey(name: string | null | undefined, phone: string | null | undefined) {
  const folded = name?.trim().toLowerCase().replace(/\s+/g, ' ')
  if (phone?.includes('*')) return `tel:${phone.replace(/\s+/g, '')}${folded ? `:${folded}` : ''}`
  const digits = normalizePhone(phone)
  if (digits) return `tel:${digits}`
  return folded ? `name:${folded}` : null
}

/** The ledger entry a stored row holds (`ledgerKey`), or null without a receipt. */
export function entryKey(r: Pick<StoredTransaction, 'receipt_number' | 'leg'>): string | null {
  return r.receipt_number ? ledgerKey(r.receipt_number, r.leg) : null
}

/** What a kind counts as (KIND_ROLE); an unknown or missing one counts as the balance only. */
export function roleOf(kind: string | null): 'revenue' | 'expense' | 'balance' {
  return (kind !== null && KIND_ROLE[kind as Kind]) || 'balance'
}

/**
 * Whether the row's counterparty is a customer or a supplier: only the people paid by or paying
 * the business (customer and supplier payments). Agents, lenders, M-Shwari, Fuliza, the bank and
 * the owner's own accounts never are, so the counterparty rollups leave them out.
 */
export function isTradingParty(kind: string | null): boolean {
  return kind === 'customer_payment' || kind === 'supplier_payment'
}
