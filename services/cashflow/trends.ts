import { round2, toMajor } from '../kernel/money.ts'
import { addDays, dayNumber } from '../kernel/time-zone.ts'
import type { DailySeries } from './series.ts'
import { type LinearFit, linearTrend, round4 } from './stats.ts'

/** Linear trends of the net flow per day, week and month, with the periods they were fitted on. */

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

export function trendOf({
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
export function weeks(series: DailySeries): Period[] {
  return bucket(
    series,
    (i) => String(Math.floor(i / 7)),
    (p) => dayNumber(p.end) - dayNumber(p.start) === 6,
  )
}

/** Calendar months wholly inside the period. */
export function months(series: DailySeries): Period[] {
  return bucket(
    series,
    (i) => series.days[i]!.slice(0, 7),
    (p) => p.start.endsWith('-01') && addDays(p.end, 1).endsWith('-01'),
  )
}
