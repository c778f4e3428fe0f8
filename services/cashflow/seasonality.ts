import { round2, toMajor } from '../kernel/money.ts'
import { type DailySeries, netOf } from './series.ts'
import { fTestPValue, type LinearFit, round4 } from './stats.ts'

/**
 * Seasonal effects of the detrended daily net by group (weekday or day of month): the additive
 * effect in currency per day, multiplicative indices of inflow and outflow (1 = average), and a
 * one-way ANOVA F test of whether the groups differ at all.
 */
export function seasonality(
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
