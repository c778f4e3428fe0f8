import { cashflowTransactions } from '../../schema/cashflow/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { toMajor } from '../kernel/money.ts'
import { dayFromNumber, dayNumber } from '../kernel/time-zone.ts'
import { operatingSql } from './kinds.ts'
import { mean, median, stdDev } from './stats.ts'

export interface RecurringPayment {
  counterparty: string
  category: string
  direction: 'in' | 'out'
  frequency: 'weekly' | 'biweekly' | 'monthly'
  interval_days: number
  typical_amount: number
  amount_variation: number
  occurrences: number
  first_date: string
  last_date: string
  next_expected_date: string
  /** Typical amount scaled to a 30-day month, for ranking. */
  monthly_amount: number
  confidence: number
}

/** A detected series with its occurrences (day number → cents), for the forecast. */
export interface RecurringSeries {
  payment: RecurringPayment
  /** Signed cents (inflow positive) by day number. */
  byDay: Map<number, number>
  /** Day of the month it falls on; 'last' for the month's last day. */
  dayOfMonth: number | 'last'
  /** Signed typical amount in cents. */
  typical: number
}

type StoredTransaction = typeof cashflowTransactions.$inferSelect

/** A stored transaction with a counterparty, as series are looked for in (amount in cents). */
export type TransactionRow = Pick<
  StoredTransaction,
  'day' | 'direction' | 'category' | 'amount'
> & {
  counterparty: NonNullable<StoredTransaction['counterparty']>
}

const CADENCES = [
  { frequency: 'weekly', days: 7, tolerance: 1 },
  { frequency: 'biweekly', days: 14, tolerance: 2 },
  { frequency: 'monthly', days: 30.44, tolerance: 4 },
] as const

/** Most intervals must fit the cadence and amounts may vary this much (coefficient of variation). */
const MIN_REGULARITY = 0.75
const MAX_AMOUNT_VARIATION = 0.2
const MIN_OCCURRENCES = 3

const tx = sqlNames(cashflowTransactions)
/** On the forecast's measured path (bench/cashflow.ts): a prepared statement, names from the table. */
const TRANSACTION_ROWS = `SELECT ${selectList(cashflowTransactions, ['day', 'direction', 'category', 'amount', 'counterparty'])}
  FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.day} BETWEEN ? AND ? AND ${tx.counterparty} IS NOT NULL
  AND ${operatingSql(tx.kind)}`

/** Operating transactions only: a weekly Fuliza repayment is not a bill the business pays. */
export function loadTransactionRows(
  db: Db,
  { tenantId, from, to }: { tenantId: string; from: string; to: string },
): TransactionRow[] {
  return db.sqlite
    .query<TransactionRow, [string, string, string]>(TRANSACTION_ROWS)
    .all(tenantId, from, to)
}

const lastDayOfMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate()

function typicalDayOfMonth(days: number[]): number | 'last' {
  let onLast = 0
  const counts = new Map<number, number>()
  for (const d of days) {
    const date = new Date(d * 86_400_000)
    const dom = date.getUTCDate()
    if (dom === lastDayOfMonth(date.getUTCFullYear(), date.getUTCMonth() + 1)) onLast++
    counts.set(dom, (counts.get(dom) ?? 0) + 1)
  }
  const [mode, modeCount] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!
  return onLast > modeCount ? 'last' : mode
}

/** Whether a day number is an occurrence day of a monthly payment. */
export function fallsOn(dayNumberValue: number, dayOfMonth: number | 'last'): boolean {
  const date = new Date(dayNumberValue * 86_400_000)
  const last = lastDayOfMonth(date.getUTCFullYear(), date.getUTCMonth() + 1)
  const dom = date.getUTCDate()
  return dayOfMonth === 'last' ? dom === last : dom === Math.min(dayOfMonth, last)
}

/**
 * Payments that repeat with the same counterparty and category at a weekly, fortnightly or
 * monthly rhythm with similar amounts (rent, salaries, a supplier paid every Monday).
 * Several payments to the same counterparty on one day count as one occurrence.
 */
export function findRecurring(rows: readonly TransactionRow[], to?: string): RecurringSeries[] {
  const groups = new Map<string, { name: string; byDay: Map<number, number> }>()
  for (const r of rows) {
    if (to && r.day > to) continue
    const key = `${r.direction}\u0000${r.category}\u0000${r.counterparty.toLowerCase()}`
    let group = groups.get(key)
    if (!group) {
      group = { name: r.counterparty, byDay: new Map() }
      groups.set(key, group)
    }
    const d = dayNumber(r.day)
    group.byDay.set(d, (group.byDay.get(d) ?? 0) + r.amount)
  }

  const found: RecurringSeries[] = []
  for (const [key, { name, byDay }] of groups) {
    if (byDay.size < MIN_OCCURRENCES) continue
    const days = [...byDay.keys()].sort((a, b) => a - b)
    const amounts = days.map((d) => byDay.get(d)!)
    const intervals = days.slice(1).map((d, i) => d - days[i]!)
    const typicalInterval = median(intervals)
    const cadence = CADENCES.find((c) => Math.abs(typicalInterval - c.days) <= c.tolerance)
    if (!cadence) continue
    const regular =
      intervals.filter((i) => Math.abs(i - cadence.days) <= cadence.tolerance).length /
      intervals.length
    const variation = mean(amounts) > 0 ? stdDev(amounts) / mean(amounts) : 1
    if (regular < MIN_REGULARITY || variation > MAX_AMOUNT_VARIATION) continue
    const [direction, category] = key.split('\u0000') as ['in' | 'out', string]
    const typical = median(amounts)
    const last = days[days.length - 1]!
    const dayOfMonth = typicalDayOfMonth(days)
    let next = last + cadence.days
    if (cadence.frequency === 'monthly') {
      next = last + 20
      while (!fallsOn(next, dayOfMonth)) next++
    }
    const sign = direction === 'in' ? 1 : -1
    found.push({
      byDay: new Map(days.map((d) => [d, sign * byDay.get(d)!])),
      dayOfMonth,
      typical: sign * typical,
      payment: {
        counterparty: name,
        category,
        direction,
        frequency: cadence.frequency,
        interval_days: Math.round(typicalInterval * 10) / 10,
        typical_amount: toMajor(typical),
        amount_variation: Math.round(variation * 1000) / 1000,
        occurrences: days.length,
        first_date: dayFromNumber(days[0]!),
        last_date: dayFromNumber(last),
        next_expected_date: dayFromNumber(Math.round(next)),
        monthly_amount: toMajor((typical * 30.44) / cadence.days),
        confidence:
          Math.round(regular * (1 - variation) * Math.min(1, days.length / 6) * 1000) / 1000,
      },
    })
  }
  return found.sort((a, b) => b.payment.monthly_amount - a.payment.monthly_amount)
}

export function detectRecurring(
  db: Db,
  { tenantId, from, to, limit }: { tenantId: string; from: string; to: string; limit: number },
): RecurringPayment[] {
  return findRecurring(loadTransactionRows(db, { tenantId, from, to }))
    .slice(0, limit)
    .map((r) => r.payment)
}
