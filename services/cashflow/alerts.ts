import { topics } from '../../schema/events.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { centsOf, toMajor } from '../kernel/money.ts'
import { forecastCashflow } from './forecast.ts'

export interface CashflowState {
  /** Latest known balance in cents. */
  balance: number | null
  balanceAt: string | null
  /** Low-balance threshold in cents. */
  threshold: number | null
  balanceBelow: boolean
  forecastBelow: boolean
}

/** How far ahead the projected balance is watched for the low-balance alert. */
export const ALERT_LOOKAHEAD_DAYS = 7

export function readState(db: Db, tenantId: string): CashflowState {
  const row = db.sqlite
    .query<
      {
        balance: number | null
        balance_at: string | null
        low_balance_threshold: number | null
        balance_below: number
        forecast_below: number
      },
      [string]
    >(
      `SELECT balance, balance_at, low_balance_threshold, balance_below, forecast_below
       FROM cashflow_state WHERE tenant_id = ?`,
    )
    .get(tenantId)
  return {
    balance: row?.balance ?? null,
    balanceAt: row?.balance_at ?? null,
    threshold: row?.low_balance_threshold ?? null,
    balanceBelow: row?.balance_below === 1,
    forecastBelow: row?.forecast_below === 1,
  }
}

function writeFlags(
  db: Db,
  {
    tenantId,
    balanceBelow,
    forecastBelow,
    now,
  }: { tenantId: string; balanceBelow: boolean; forecastBelow: boolean; now: Date },
) {
  db.sqlite
    .query(
      `INSERT INTO cashflow_state (tenant_id, balance_below, forecast_below, updated_at)
       VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET
       balance_below = excluded.balance_below, forecast_below = excluded.forecast_below,
       updated_at = excluded.updated_at`,
    )
    .run(tenantId, balanceBelow ? 1 : 0, forecastBelow ? 1 : 0, now.toISOString())
}

export function setThreshold(
  db: Db,
  { tenantId, threshold, now }: { tenantId: string; threshold: number | null; now: Date },
): void {
  db.sqlite
    .query(
      `INSERT INTO cashflow_state (tenant_id, low_balance_threshold, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET low_balance_threshold = excluded.low_balance_threshold,
       updated_at = excluded.updated_at`,
    )
    .run(tenantId, threshold, now.toISOString())
}

/** The earliest day within the look-ahead whose projected balance is below the threshold. */
function projectedBreach(db: Db, tenantId: string, state: CashflowState): string | null {
  if (state.balance === null || state.threshold === null) return null
  const forecast = forecastCashflow(db, {
    tenantId,
    horizon: ALERT_LOOKAHEAD_DAYS,
    balanceCents: state.balance,
    opts: {
      backtest: false,
    },
  })
  const breach = forecast.points.find(
    (p) => p.balance !== null && centsOf(p.balance) < state.threshold!,
  )
  return breach?.date ?? null
}

/**
 * Emits `mobilemoney.balance.low` once per crossing: when the balance goes below the threshold,
 * or, while it is still above, when the forecast projects it below within the next 7 days. The
 * flags go back down when the condition clears, so the next crossing alerts again.
 */
export function evaluateLowBalance(db: Db, tenantId: string, clock: Clock): void {
  const peek = readState(db, tenantId)
  if (peek.threshold === null && !peek.balanceBelow && !peek.forecastBelow) return
  // The forecast is read outside the write lock; the decision is taken on fresh state inside it.
  const breachDate =
    peek.balance !== null && peek.threshold !== null && peek.balance >= peek.threshold
      ? projectedBreach(db, tenantId, peek)
      : null
  db.write(() => {
    const state = readState(db, tenantId)
    const now = clock.now()
    const known = state.balance !== null && state.threshold !== null
    const balanceBelow = known && state.balance! < state.threshold!
    const forecastBelow = known && !balanceBelow && breachDate !== null
    const base = {
      balance: state.balance === null ? null : toMajor(state.balance),
      threshold: toMajor(state.threshold ?? 0),
    }
    if (balanceBelow && !state.balanceBelow) {
      emitEvent(
        db,
        {
          topic: topics.balanceLow,
          tenantId,
          data: { ...base, forecast_date: null, reason: 'balance_below_threshold' },
        },
        clock,
      )
    }
    if (forecastBelow && !state.forecastBelow) {
      emitEvent(
        db,
        {
          topic: topics.balanceLow,
          tenantId,
          data: { ...base, forecast_date: breachDate, reason: 'forecast_below_threshold' },
        },
        clock,
      )
    }
    if (balanceBelow !== state.balanceBelow || forecastBelow !== state.forecastBelow) {
      writeFlags(db, { tenantId, balanceBelow, forecastBelow, now })
    }
  })
}
