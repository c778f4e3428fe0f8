import type { Db } from '../kernel/db.ts'
import { addDays } from './days.ts'
import { fitHoltWinters, forecastHoltWinters, seasonalNaive } from './holt-winters.ts'
import { loadDailySeries, netOf, seriesBounds } from './series.ts'
import { Z80, Z95 } from './stats.ts'

/** Fewer days than this and no model is fitted (two full weeks of the weekly season). */
export const MIN_HISTORY_DAYS = 14
export const BACKTEST_DAYS = 28
export const MODEL = 'holt_winters_additive_damped'

export interface ForecastPoint {
  date: string
  net: number
  lower_80: number
  upper_80: number
  lower_95: number
  upper_95: number
  /** Projected balance at the end of the day, when a balance is known. */
  balance: number | null
}

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
  points: ForecastPoint[]
  backtest: (ErrorScores & { holdout_days: number; from: string; to: string }) | null
  baseline: (ErrorScores & { model: 'seasonal_naive' }) | null
}

const round2 = (v: number) => Math.round(v * 100) / 100

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
const round4 = (v: number) => Math.round(v * 10000) / 10000

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
): Pick<Forecast, 'backtest' | 'baseline'> {
  const holdout = Math.min(BACKTEST_DAYS, y.length - 3 * 7)
  if (holdout < 7) return { backtest: null, baseline: null }
  const train = y.slice(0, y.length - holdout)
  const actual = y.slice(y.length - holdout)
  const fit = fitHoltWinters(train)
  const predicted = forecastHoltWinters(fit, holdout).mean
  const scale = seasonalNaiveScale(train)
  return {
    backtest: {
      ...scores(actual, predicted, scale),
      holdout_days: holdout,
      from: days[y.length - holdout]!,
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
  tenantId: string,
  horizon: number,
  balanceCents: number | null,
  opts: { backtest?: boolean } = {},
): Forecast {
  const bounds = seriesBounds(db, tenantId)
  const empty: Forecast = {
    tenant_id: tenantId,
    horizon,
    model: 'insufficient_history',
    params: null,
    history: { from: bounds?.first ?? null, to: bounds?.last ?? null, days: 0 },
    points: [],
    backtest: null,
    baseline: null,
  }
  if (!bounds) return empty
  const series = loadDailySeries(db, tenantId, bounds.first, bounds.last)
  empty.history.days = series.days.length
  if (series.days.length < MIN_HISTORY_DAYS) return empty
  const y = netOf(series).map((c) => c / 100)
  const fit = fitHoltWinters(y)
  const { mean, sd } = forecastHoltWinters(fit, horizon)
  let balance = balanceCents === null ? null : balanceCents / 100
  const points: ForecastPoint[] = mean.map((net, i) => {
    if (balance !== null) balance += net
    return {
      date: addDays(bounds.last, i + 1),
      net: round2(net),
      lower_80: round2(net - Z80 * sd[i]!),
      upper_80: round2(net + Z80 * sd[i]!),
      lower_95: round2(net - Z95 * sd[i]!),
      upper_95: round2(net + Z95 * sd[i]!),
      balance: balance === null ? null : round2(balance),
    }
  })
  return {
    tenant_id: tenantId,
    horizon,
    model: MODEL,
    params: {
      alpha: round4(fit.params.alpha),
      beta: round4(fit.params.beta),
      gamma: round4(fit.params.gamma),
      phi: round4(fit.params.phi),
      season_length: fit.seasonLength,
    },
    history: { from: bounds.first, to: bounds.last, days: series.days.length },
    points,
    ...(opts.backtest === false
      ? { backtest: null, baseline: null }
      : backtestSeries(y, series.days)),
  }
}
