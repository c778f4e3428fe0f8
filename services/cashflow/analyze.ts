import type { FlowLine } from '../../schema/cashflow/views.ts'
import type { Db } from '../kernel/db.ts'
import { toMajor } from '../kernel/money.ts'
import { addDays, dayNumber, WEEKDAYS, weekdayOf } from '../kernel/time-zone.ts'
import { detectRecurring, type RecurringPayment } from './recurring.ts'
import { seasonality } from './seasonality.ts'
import { loadBalanceLines, loadCategoryDays, loadDailySeries } from './series.ts'
import { linearTrend } from './stats.ts'
import { lineOf } from './summary.ts'
import { months, type Period, type Trend, trendOf, weeks } from './trends.ts'

export interface AnalyzeOptions {
  significance: number
  drivers_limit: number
  recurring: boolean
  recurring_limit: number
}

function drivers(
  db: Db,
  { tenantId, from, to, limit }: { tenantId: string; from: string; to: string; limit: number },
) {
  const span = dayNumber(to) - dayNumber(from) + 1
  const previousFrom = addDays(from, -span)
  const current = new Map<string, { inflow: number; outflow: number }>()
  const previous = new Map<string, { inflow: number; outflow: number }>()
  for (const row of loadCategoryDays(db, { tenantId, from: previousFrom, to })) {
    const map = row.day < from ? previous : current
    const entry = map.get(row.category) ?? { inflow: 0, outflow: 0 }
    entry.inflow += row.inflow
    entry.outflow += row.outflow
    map.set(row.category, entry)
  }
  const side = (key: 'inflow' | 'outflow') => {
    let total = 0
    for (const v of current.values()) total += v[key]
    return [...current.entries()]
      .filter(([, v]) => v[key] > 0)
      .sort((a, b) => b[1][key] - a[1][key])
      .slice(0, limit)
      .map(([category, v]) => {
        const before = previous.get(category)?.[key] ?? 0
        return {
          category,
          amount: toMajor(v[key]),
          share: total > 0 ? Math.round((v[key] / total) * 10000) / 10000 : 0,
          previous_amount: toMajor(before),
          change: toMajor(v[key] - before),
        }
      })
  }
  return { inflow: side('inflow'), outflow: side('outflow') }
}

export interface Analysis {
  tenant_id: string
  from: string
  to: string
  days: number
  /** Operating flows: money earned and spent. */
  totals: { inflow: number; outflow: number; net: number }
  financing: FlowLine
  transfers: FlowLine
  trend: { daily: Trend; weekly: Trend; monthly: Trend }
  seasonality: {
    day_of_week: ReturnType<typeof seasonality> & {
      indices: Array<{ day: string } & ReturnType<typeof seasonality>['indices'][number]>
    }
    day_of_month: ReturnType<typeof seasonality>
  }
  drivers: ReturnType<typeof drivers>
  recurring: RecurringPayment[]
}

/**
 * Trends, seasonality, category drivers and recurring payments of the operating flows over
 * `from`..`to`; loans and transfers as their own lines.
 */
export function analyzeCashflow(
  db: Db,
  {
    tenantId,
    from,
    to,
    options,
  }: { tenantId: string; from: string; to: string; options: AnalyzeOptions },
): Analysis {
  const series = loadDailySeries(db, { tenantId, from, to })
  const dailyPeriods: Period[] = series.days.map((day, i) => ({
    start: day,
    end: day,
    inflow: toMajor(series.inflow[i]!),
    outflow: toMajor(series.outflow[i]!),
    net: toMajor(series.inflow[i]! - series.outflow[i]!),
  }))
  const daily = trendOf({
    period: 'day',
    periods: dailyPeriods,
    alpha: options.significance,
    withPeriods: false,
  })
  const dailyFit = linearTrend(dailyPeriods.map((p) => p.net))
  const dow = seasonality(series, {
    groups: 7,
    groupOf: weekdayOf,
    fit: dailyFit,
    alpha: options.significance,
  })
  const dom = seasonality(series, {
    groups: 31,
    groupOf: (day) => Number(day.slice(8, 10)) - 1,
    fit: dailyFit,
    alpha: options.significance,
  })
  const inflow = series.inflow.reduce((s, v) => s + v, 0)
  const outflow = series.outflow.reduce((s, v) => s + v, 0)
  const lines = loadBalanceLines(db, { tenantId, from, to })
  return {
    tenant_id: tenantId,
    from,
    to,
    days: series.days.length,
    totals: { inflow: toMajor(inflow), outflow: toMajor(outflow), net: toMajor(inflow - outflow) },
    financing: lineOf(lines.financing),
    transfers: lineOf(lines.transfers),
    trend: {
      daily,
      weekly: trendOf({
        period: 'week',
        periods: weeks(series),
        alpha: options.significance,
        withPeriods: true,
      }),
      monthly: trendOf({
        period: 'month',
        periods: months(series),
        alpha: options.significance,
        withPeriods: true,
      }),
    },
    seasonality: {
      day_of_week: {
        ...dow,
        indices: dow.indices.map((x) => ({ day: WEEKDAYS[x.group]!, ...x })),
      },
      day_of_month: dom,
    },
    drivers: drivers(db, { tenantId, from, to, limit: options.drivers_limit }),
    recurring: options.recurring
      ? detectRecurring(db, { tenantId, from, to, limit: options.recurring_limit })
      : [],
  }
}
