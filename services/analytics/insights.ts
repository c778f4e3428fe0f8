import { and, eq, max, min } from 'drizzle-orm'
import { dailyTotals, transactions } from '../../schema/analytics/tables.ts'
import { addDays, daysBetween } from '../kernel/time-zone.ts'
import {
  customerConcentration,
  type Insight,
  type InsightWindow,
  largestExpenses,
  newAndReturning,
  revenueChange,
  segmentInsights,
} from './insight-rules.ts'
import { dayText } from './insight-words.ts'
import { readCells, type Scope } from './summary.ts'
import { unusualDays } from './unusual-days.ts'

/** The last local day with a transaction in scope, or null without any. */
export function lastDataDay(scope: Scope): string | null {
  const t = dailyTotals
  const mine = scope.userId === null ? undefined : eq(t.userId, scope.userId)
  const row = scope.db.orm
    .select({ day: max(t.day) })
    .from(t)
    .where(and(eq(t.tenantId, scope.tenantId), mine))
    .get()
  return row?.day ?? null
}

/** A period of whole local days, `from` and `to` included. */
export interface DayPeriod {
  from: string
  to: string
}

/**
 * Rule-based insights, each one sentence with the numbers behind it. Periods are whole local days
 * (the tenant's time zone) ending at `as_of`: today, or the last day with data when that is older
 * (a statement imported a week after it ended is not a week without revenue). Without a period, a
 * week is the last 7 days against the 7 before and a month the last 30 against the 30 before;
 * with one, the period is compared with as many days just before it. A comparison is made only
 * when the data reaches back to the start of the earlier window: a month against a window holding
 * three days of data would say "up 995%". RFM-based insights only when `advanced` is on.
 */
export function buildInsights(
  scope: Scope,
  {
    nowMs,
    advanced,
    period = null,
  }: {
    nowMs: number
    /** The plan has advanced analytics: the RFM-based insights too. */
    advanced: boolean
    period?: DayPeriod | null
  },
): { as_of: string; data: Insight[] } {
  const last = lastDataDay(scope)
  const todayHere = scope.zone.dayOf(nowMs)
  const today = period?.to ?? (last && last < todayHere ? last : todayHere)
  return { as_of: today, data: insightsUpTo(scope, { today, nowMs, advanced, period }) }
}

/** The first local day with a transaction in scope, or null without any. */
function firstDataDay(scope: Scope): string | null {
  const { db, tenantId, userId } = scope
  const row =
    userId === null
      ? db.orm
          .select({ day: min(dailyTotals.day) })
          .from(dailyTotals)
          .where(eq(dailyTotals.tenantId, tenantId))
          .get()
      : db.orm
          .select({ day: min(transactions.localDay) })
          .from(transactions)
          .where(and(eq(transactions.tenantId, tenantId), eq(transactions.userId, userId)))
          .get()
  return row?.day ?? null
}

function insightsUpTo(
  scope: Scope,
  {
    today,
    nowMs,
    advanced,
    period,
  }: { today: string; nowMs: number; advanced: boolean; period: DayPeriod | null },
): Insight[] {
  const spanDays = period ? daysBetween(period.from, period.to) + 1 : 0
  const ending = (days: number) =>
    period
      ? `from ${dayText(period.from)} to ${dayText(period.to)}`
      : `in the ${days} days to ${dayText(today)}`
  /** The first day of the window of `days` days (the whole period when one is given). */
  const startOf = (days: number) => (period ? period.from : addDays(today, 1 - days))
  const cellsFor = (fromDay: string, toDay: string) =>
    readCells(
      {
        ...scope,
        range: {
          fromMs: scope.zone.startOf(fromDay),
          toMs: scope.zone.startOf(addDays(toDay, 1)),
        },
      },
      { byCategory: true },
    )
  const firstDay = firstDataDay(scope)
  const reach = Math.max(90, 2 * spanDays)
  const recent = cellsFor(addDays(today, 1 - reach), today)
  const w: InsightWindow = { scope, today, period, spanDays, firstDay, recent, ending, startOf }
  const from90 = startOf(90)
  const unusual = unusualDays(recent.filter((c) => c.day >= from90))
  return [
    ...revenueChange(w),
    ...customerConcentration(w),
    ...newAndReturning(w),
    ...largestExpenses(w),
    ...(unusual ? [unusual] : []),
    ...(advanced ? segmentInsights(scope, nowMs) : []),
  ]
}
