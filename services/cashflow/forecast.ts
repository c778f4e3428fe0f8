import type { ForecastPoint } from '../../schema/cashflow/views.ts'
import type { Db } from '../kernel/db.ts'
import { round2, toMajor } from '../kernel/money.ts'
import { addDays, dayNumber } from '../kernel/time-zone.ts'
import { fitHoltWinters, forecastHoltWinters, type HwFit, seasonalNaive } from './holt-winters.ts'
import {
  fallsOn,
  findRecurring,
  loadTransactionRows,
  type RecurringPayment,
  type TransactionRow,
} from './recurring.ts'
import { loadDailySeries, netOf, seriesBounds } from './series.ts'
import { round4, Z80, Z95 } from './stats.ts'

/** Fewer days than this and no model is fitted (two full weeks of the weekly season). */
export const MIN_HISTORY_DAYS = 14
export const BACKTEST_DAYS = 28
export const MODEL = 'holt_winters_additive_damped'
/** How far back monthly scheduled payments are looked for. */
const SCHEDULE_LOOKBACK_DAYS = 400
/** A monthly payment not seen for this long is no longer projected. */
const SCHEDULE_STALE_DAYS = 45

export interface ErrorScores {
  mase: number | null
  mape: number | null
  mae: number
  rmse: number
}

export interface Forecast {
  tenant_id: string
  horizon: number
  model: string
  params: { alpha: number; beta: number; gamma: number; phi: number; season_length: number } | null
  history: { from: string | null; to: string | null; days: number }
  /** Monthly scheduled payments projected on their days (rent, salaries). */
  scheduled: RecurringPayment[]
  points: ForecastPoint[]
  backtest: (ErrorScores & { holdout_days: number; from: string; to: string }) | null
  baseline: (ErrorScores & { model: 'seasonal_naive' }) | null
}

/**
 * The model: monthly scheduled payments found in the transactions (same counterparty, similar
 * amount, about monthly) are taken out of the history, Holt-Winters with a weekly season is fitted
 * to the rest, and the payments are put back on the days they are due.
 */
interface Model {
  fit: HwFit
  scheduled: RecurringPayment[]
  mean: number[]
  sd: number[]
}

function fitModel(y: number[], days: string[], rows: TransactionRow[], horizon: number): Model {
  const last = days[days.length - 1]!
  const lastNumber = dayNumber(last)
  const monthly = findRecurring(rows, last).filter(
    (r) =>
      r.payment.frequency === 'monthly' &&
      lastNumber - dayNumber(r.payment.last_date) <= SCHEDULE_STALE_DAYS,
  )
  const adjusted = y.slice()
  if (monthly.length > 0) {
    const first = dayNumber(days[0]!)
    for (const r of monthly) {
      for (const [d, cents] of r.byDay) {
        const i = d - first
        if (i >= 0 && i < adjusted.length) adjusted[i]! -= toMajor(cents)
      }
    }
  }
  const fit = fitHoltWinters(adjusted)
  const { mean, sd } = forecastHoltWinters(fit, horizon)
  for (let h = 0; h < horizon; h++) {
    for (const r of monthly)
      if (fallsOn(lastNumber + h + 1, r.dayOfMonth)) mean[h]! += toMajor(r.typical)
  }
  return { fit, scheduled: monthly.map((r) => r.payment), mean, sd }
}

/**
 * Errors of a forecast over a held-out stretch. MASE divides the MAE by the in-sample MAE of the
 * one-step seasonal-naive forecast (lag 7), so below 1 beats that naive rule; MAPE skips days
 * whose actual net is zero.
 */
function scores(actual: number[], predicted: number[], scale: number): ErrorScores {
  let abs = 0
  let sq = 0
  let pct = 0
  let pctCount = 0
  for (let i = 0; i < actual.length; i++) {
    const e = actual[i]! - predicted[i]!
    abs += Math.abs(e)
    sq += e * e
    if (actual[i] !== 0) {
      pct += Math.abs(e / actual[i]!)
      pctCount++
    }
  }
  const mae = abs / actual.length
  return {
    mase: scale > 0 ? round4(mae / scale) : null,
    mape: pctCount > 0 ? round2((100 * pct) / pctCount) : null,
    mae: round2(mae),
    rmse: round2(Math.sqrt(sq / actual.length)),
  }
}

function seasonalNaiveScale(y: number[], m = 7): number {
  let s = 0
  for (let i = m; i < y.length; i++) s += Math.abs(y[i]! - y[i - m]!)
  return y.length > m ? s / (y.length - m) : 0
}

/**
 * Backtest on the tenant's own history: fit on everything but the last 28 days (fewer when the
 * history is short), forecast them, and score both the model and seasonal naive.
 */
export function backtestSeries(
  y: number[],
  days: string[],
  rows: TransactionRow[],
): Pick<Forecast, 'backtest' | 'baseline'> {
  const holdout = Math.min(BACKTEST_DAYS, y.length - 3 * 7)
  if (holdout < 7) return { backtest: null, baseline: null }
  const cut = y.length - holdout
  const train = y.slice(0, cut)
  const actual = y.slice(cut)
  const predicted = fitModel(train, days.slice(0, cut), rows, holdout).mean
  const scale = seasonalNaiveScale(train)
  return {
    backtest: {
      ...scores(actual, predicted, scale),
      holdout_days: holdout,
      from: days[cut]!,
      to: days[y.length - 1]!,
    },
    baseline: { model: 'seasonal_naive', ...scores(actual, seasonalNaive(train, holdout), scale) },
  }
}

/**
 * Forecasts daily net cashflow from the day after the last day with data. With less than two
 * weeks of history it answers model `insufficient_history` and no points.
 */
export function forecastCashflow(
  db: Db,
  {
    tenantId,
    horizon,
    balanceCents,
    opts = {},
  }: {
    tenantId: string
    horizon: number
    balanceCents: number | null
    opts?: { backtest?: boolean }
  },
): Forecast {
  const bounds = seriesBounds(db, tenantId)
  const empty: Forecast = {
    tenant_id: tenantId,
    horizon,
    model: 'insufficient_history',
    params: null,
    history: { from: bounds?.first ?? null, to: bounds?.last ?? null, days: 0 },
    scheduled: [],
    points: [],
    backtest: null,
    baseline: null,
  }
  if (!bounds) return empty
  const series = loadDailySeries(db, { tenantId, from: bounds.first, to: bounds.last })
  empty.history.days = series.days.length
  if (series.days.length < MIN_HISTORY_DAYS) return empty
  const y = netOf(series).map((c) => toMajor(c))
  // Days are ISO strings, so the later of the two sorts last.
  const rowsFrom = [addDays(bounds.last, -(SCHEDULE_LOOKBACK_DAYS + BACKTEST_DAYS)), bounds.first]
    .sort()
    .at(-1)!
  const rows = loadTransactionRows(db, { tenantId, from: rowsFrom, to: bounds.last })
  const model = fitModel(y, series.days, rows, horizon)
  let balance = balanceCents === null ? null : toMajor(balanceCents)
  const points: ForecastPoint[] = model.mean.map((net, i) => {
    const sd = model.sd[i]!
    if (balance !== null) balance += net
    return {
      date: addDays(bounds.last, i + 1),
      net: round2(net),
      lower_80: round2(net - Z80 * sd),
      upper_80: round2(net + Z80 * sd),
      lower_95: round2(net - Z95 * sd),
      upper_95: round2(net + Z95 * sd),
      balance: balance === null ? null : round2(balance),
    }
  })
  const p = model.fit.params
  return {
    tenant_id: tenantId,
    horizon,
    model: MODEL,
    params: {
      alpha: round4(p.alpha),
      beta: round4(p.beta),
      gamma: round4(p.gamma),
      phi: round4(p.phi),
      season_length: model.fit.seasonLength,
    },
    history: { from: bounds.first, to: bounds.last, days: series.days.length },
    scheduled: model.scheduled,
    points,
    ...(opts.backtest === false
      ? { backtest: null, baseline: null }
      : backtestSeries(y, series.days, rows)),
  }
}
