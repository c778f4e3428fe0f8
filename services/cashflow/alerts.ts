import { eq } from 'drizzle-orm'
import { cashflowState } from '../../schema/cashflow/tables.ts'
import { topics } from '../../schema/events.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { centsOf, toMajor } from '../kernel/money.ts'
import { forecastCashflow } from './forecast.ts'

type StateRow = typeof cashflowState.$inferSelect

export interface CashflowState {
  /** Latest known balance in cents. */
  balance: StateRow['balance']
  balanceAt: StateRow['balanceAt']
  /** Low-balance threshold in cents. */
  threshold: StateRow['lowBalanceThreshold']
  balanceBelow: boolean
  forecastBelow: boolean
}

/** How far ahead the projected balance is watched for the low-balance alert. */
export const ALERT_LOOKAHEAD_DAYS = 7

export function readState(db: Db, tenantId: string): CashflowState {
  const t = cashflowState
  const row = db.orm
    .select({
      balance: t.balance,
      balanceAt: t.balanceAt,
      threshold: t.lowBalanceThreshold,
      balanceBelow: t.balanceBelow,
      forecastBelow: t.forecastBelow,
    })
    .from(t)
    .where(eq(t.tenantId, tenantId))
    .get()
  return {
    balance: row?.balance ?? null,
    balanceAt: row?.balanceAt ?? null,
    threshold: row?.threshold ?? null,
    balanceBelow: row?.balanceBelow === 1,
    forecastBelow: row?.forecastBelow === 1,
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
  const values = { balanceBelow: balanceBelow ? 1 : 0, forecastBelow: forecastBelow ? 1 : 0 }
  upsertState(db, { tenantId, values, now })
}

export function setThreshold(
  db: Db,
  { tenantId, threshold, now }: { tenantId: string; threshold: number | null; now: Date },
): void {
  upsertState(db, { tenantId, values: { lowBalanceThreshold: threshold }, now })
}

/** Sets some of a tenant's state columns, adding its row if it has none yet. */
function upsertState(
  db: Db,
  {
    tenantId,
    values,
    now,
  }: {
    tenantId: string
    values: Partial<Pick<StateRow, 'lowBalanceThreshold' | 'balanceBelow' | 'forecastBelow'>>
    now: Date
  },
): void {
  const updatedAt = now.toISOString()
  db.orm
    .insert(cashflowState)
    .values({ tenantId, ...values, updatedAt })
    .onConflictDoUpdate({ target: cashflowState.tenantId, set: { ...values, updatedAt } })
    .run()
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
