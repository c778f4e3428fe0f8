import type { FlowLine } from '../../schema/cashflow/views.ts'
import type { Db } from '../kernel/db.ts'
import { round2, toMajor } from '../kernel/money.ts'
import { addDays, dayNumber, WEEKDAYS, weekdayOf } from './days.ts'
import { detectRecurring, type RecurringPayment } from './recurring.ts'
import {
  type DailySeries,
  loadBalanceLines,
  loadCategoryDays,
  loadDailySeries,
  netOf,
} from './series.ts'
import { fTestPValue, type LinearFit, linearTrend } from './stats.ts'
import { lineOf } from './summary.ts'

export interface AnalyzeOptions {
  significance: number
  drivers_limit: number
  recurring: boolean
  recurring_limit: number
}

export interface Period {
  start: string
  end: string
  inflow: number
  outflow: number
  net: number
}

export interface Trend extends LinearFit {
  /** Slope unit: currency per period. */
  period: 'day' | 'week' | 'month'
  significant: boolean
  direction: 'up' | 'down' | 'flat'
  inflow_slope: number
  outflow_slope: number
  periods: Period[]
}

const round4 = (v: number | null) => (v === null ? null : Math.round(v * 10000) / 10000)

function trendOf({
  period,
  periods,
  alpha,
  withPeriods,
}: {
  period: Trend['period']
  periods: Period[]
  alpha: number
  /** The answer lists the periods too (weeks and months; days are too many). */
  withPeriods: boolean
}): Trend {
  const fit = linearTrend(periods.map((p) => p.net))
  const significant = fit.p_value !== null && fit.p_value < alpha
  return {
    period,
    slope: round2(fit.slope),
    intercept: round2(fit.intercept),
    slope_std_error: round4(fit.slope_std_error),
    t_stat: round4(fit.t_stat),
    p_value: round4(fit.p_value),
    r_squared: round4(fit.r_squared),
    n: fit.n,
    significant,
    direction: !significant ? 'flat' : fit.slope > 0 ? 'up' : 'down',
    inflow_slope: round2(linearTrend(periods.map((p) => p.inflow)).slope),
    outflow_slope: round2(linearTrend(periods.map((p) => p.outflow)).slope),
    periods: withPeriods ? periods : [],
  }
}

function bucket(series: DailySeries, keyOf: (i: number) => string, keep: (p: Period) => boolean) {
  const out: Period[] = []
  let current: Period | null = null
  let key = ''
  for (let i = 0; i < series.days.length; i++) {
    const k = keyOf(i)
    if (!current || k !== key) {
      if (current) out.push(current)
      current = { start: series.days[i]!, end: series.days[i]!, inflow: 0, outflow: 0, net: 0 }
      key = k
    }
    current.end = series.days[i]!
    current.inflow += toMajor(series.inflow[i]!)
    current.outflow += toMajor(series.outflow[i]!)
  }
  if (current) out.push(current)
  return out.filter(keep).map((p) => ({
    ...p,
    inflow: round2(p.inflow),
    outflow: round2(p.outflow),
    net: round2(p.inflow - p.outflow),
  }))
}

/** Weekly buckets start on the period's first day; a trailing partial week is left out. */
function weeks(series: DailySeries): Period[] {
  return bucket(
    series,
    (i) => String(Math.floor(i / 7)),
    (p) => dayNumber(p.end) - dayNumber(p.start) === 6,
  )
}

/** Calendar months wholly inside the period. */
function months(series: DailySeries): Period[] {
  return bucket(
    series,
    (i) => series.days[i]!.slice(0, 7),
    (p) => p.start.endsWith('-01') && addDays(p.end, 1).endsWith('-01'),
  )
}

/**
 * Seasonal effects of the detrended daily net by group (weekday or day of month): the additive
 * effect in currency per day, multiplicative indices of inflow and outflow (1 = average), and a
 * one-way ANOVA F test of whether the groups differ at all.
 */
function seasonality(
  series: DailySeries,
  {
    groups,
    groupOf,
    fit,
    alpha,
  }: { groups: number; groupOf: (day: string) => number; fit: LinearFit; alpha: number },
) {
  const n = series.days.length
  const net = netOf(series).map((c) => toMajor(c))
  const residual = net.map((v, i) => v - (fit.intercept + fit.slope * i))
  const count = new Array<number>(groups).fill(0)
  const sumR = new Array<number>(groups).fill(0)
  const sumIn = new Array<number>(groups).fill(0)
  const sumOut = new Array<number>(groups).fill(0)
  let totalIn = 0
  let totalOut = 0
  let totalR = 0
  for (let i = 0; i < n; i++) {
    const g = groupOf(series.days[i]!)
    count[g]!++
    sumR[g]! += residual[i]!
    sumIn[g]! += toMajor(series.inflow[i]!)
    sumOut[g]! += toMajor(series.outflow[i]!)
    totalIn += toMajor(series.inflow[i]!)
    totalOut += toMajor(series.outflow[i]!)
    totalR += residual[i]!
  }
  const meanIn = n ? totalIn / n : 0
  const meanOut = n ? totalOut / n : 0
  const meanR = n ? totalR / n : 0
  let between = 0
  let within = 0
  for (let i = 0; i < n; i++) {
    const g = groupOf(series.days[i]!)
    const d = residual[i]! - sumR[g]! / count[g]!
    within += d * d
  }
  let used = 0
  for (let g = 0; g < groups; g++) {
    if (count[g]! === 0) continue
    used++
    between += count[g]! * (sumR[g]! / count[g]! - meanR) ** 2
  }
  const df1 = used - 1
  const df2 = n - used
  const f = df1 > 0 && df2 > 0 && within > 0 ? between / df1 / (within / df2) : null
  const pValue = f === null ? null : fTestPValue(f, df1, df2)
  const indices = Array.from({ length: groups }, (_, g) => ({
    group: g,
    effect: count[g] ? round2(sumR[g]! / count[g]! - meanR) : null,
    inflow_index: count[g] && meanIn > 0 ? round4(sumIn[g]! / count[g]! / meanIn) : null,
    outflow_index: count[g] && meanOut > 0 ? round4(sumOut[g]! / count[g]! / meanOut) : null,
    days: count[g]!,
  }))
  return {
    indices,
    f_stat: round4(f),
    p_value: round4(pValue),
    significant: pValue !== null && pValue < alpha,
    strength: between + within > 0 ? round4(between / (between + within)) : null,
  }
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
