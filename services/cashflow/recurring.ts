import type { Db } from '../kernel/db.ts'
import { dayFromNumber, dayNumber } from './days.ts'
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

const CADENCES = [
  { frequency: 'weekly', days: 7, tolerance: 1 },
  { frequency: 'biweekly', days: 14, tolerance: 2 },
  { frequency: 'monthly', days: 30.44, tolerance: 4 },
] as const

/** Most intervals must fit the cadence and amounts may vary this much (coefficient of variation). */
const MIN_REGULARITY = 0.75
const MAX_AMOUNT_VARIATION = 0.2
const MIN_OCCURRENCES = 3

/**
 * Payments that repeat with the same counterparty and category at a weekly, fortnightly or
 * monthly rhythm with similar amounts (rent, salaries, a supplier paid every Monday).
 * Several payments to the same counterparty on one day count as one occurrence.
 */
export function detectRecurring(
  db: Db,
  tenantId: string,
  from: string,
  to: string,
  limit: number,
): RecurringPayment[] {
  const rows = db.sqlite
    .query<
      { day: string; direction: string; category: string; amount: number; counterparty: string },
      [string, string, string]
    >(
      `SELECT day, direction, category, amount, counterparty FROM cashflow_transactions
       WHERE tenant_id = ? AND day BETWEEN ? AND ? AND counterparty IS NOT NULL`,
    )
    .all(tenantId, from, to)
  const groups = new Map<string, Map<number, number>>()
  for (const r of rows) {
    const key = `${r.direction}\u0000${r.category}\u0000${r.counterparty.toLowerCase()}`
    let byDay = groups.get(key)
    if (!byDay) {
      byDay = new Map()
      groups.set(key, byDay)
    }
    const d = dayNumber(r.day)
    byDay.set(d, (byDay.get(d) ?? 0) + r.amount)
  }
  const names = new Map<string, string>()
  for (const r of rows) {
    names.set(
      `${r.direction}\u0000${r.category}\u0000${r.counterparty.toLowerCase()}`,
      r.counterparty,
    )
  }

  const found: RecurringPayment[] = []
  for (const [key, byDay] of groups) {
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
    found.push({
      counterparty: names.get(key)!,
      category,
      direction,
      frequency: cadence.frequency,
      interval_days: Math.round(typicalInterval * 10) / 10,
      typical_amount: Math.round(typical) / 100,
      amount_variation: Math.round(variation * 1000) / 1000,
      occurrences: days.length,
      first_date: dayFromNumber(days[0]!),
      last_date: dayFromNumber(last),
      next_expected_date:
        cadence.frequency === 'monthly'
          ? addMonth(dayFromNumber(last))
          : dayFromNumber(last + cadence.days),
      monthly_amount: Math.round((typical * 30.44) / cadence.days) / 100,
      confidence:
        Math.round(regular * (1 - variation) * Math.min(1, days.length / 6) * 1000) / 1000,
    })
  }
  return found.sort((a, b) => b.monthly_amount - a.monthly_amount).slice(0, limit)
}

/** Same day of the next month, clamped to its last day. */
function addMonth(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number]
  const next = new Date(Date.UTC(y, m, 1))
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  next.setUTCDate(Math.min(d, lastDay))
  return next.toISOString().slice(0, 10)
}
