import type { Db } from '../kernel/db.ts'
import { round2, toMajor } from '../kernel/money.ts'
import type { CashflowState } from './alerts.ts'
import { addDays } from './days.ts'
import { loadDailySeries } from './series.ts'

export interface Reason {
  code: string
  message: string
  /** Points this reason moved the health score (negative lowers it). */
  impact: number
}

export interface Summary {
  tenant_id: string
  from: string
  to: string
  /** The day the figures are as of: `to`, the last day with data when no day was asked for. */
  as_of: string
  days: number
  inflow: number
  outflow: number
  net: number
  balance: number | null
  balance_at: string | null
  burn_rate: number
  burn_rate_90: number
  runway_days: number | null
  liquidity_ratio: number | null
  low_balance_threshold: number | null
  health_score: number
  reasons: Reason[]
}

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0)

/** Average daily net outflow (cents) over the `days` days ending `to`; 0 when not burning. */
function burnRate(db: Db, tenantId: string, to: string, days: number): number {
  const s = loadDailySeries(db, tenantId, addDays(to, 1 - days), to)
  return Math.max(0, (sum(s.outflow) - sum(s.inflow)) / days)
}

/**
 * Cashflow health over the `days` days ending `to` (the tenant's today by default). Burn rate is
 * the average daily net outflow over the last 30 (and 90) days, runway the balance divided by
 * the 30-day burn rate, liquidity ratio inflow over outflow. The health score starts at 100 and
 * each reason takes off the points it names.
 */
export function summarizeCashflow(
  db: Db,
  tenantId: string,
  to: string,
  days: number,
  state: CashflowState,
  /** Whether the tenant has any transaction at all: an empty tenant is not penalised. */
  hasData = true,
): Summary {
  const from = addDays(to, 1 - days)
  const window = loadDailySeries(db, tenantId, from, to)
  const inflow = sum(window.inflow)
  const outflow = sum(window.outflow)
  const burn30 = burnRate(db, tenantId, to, 30)
  const burn90 = burnRate(db, tenantId, to, 90)
  const balance = state.balance
  let runway: number | null = null
  if (burn30 > 0 && balance !== null) runway = Math.max(0, Math.round((balance / burn30) * 10) / 10)
  const liquidity = outflow > 0 ? inflow / outflow : null

  const reasons: Reason[] = []
  const add = (code: string, impact: number, message: string) =>
    reasons.push({ code, impact, message })
  const activeDays = window.inflow.filter((v, i) => v > 0 || window.outflow[i]! > 0).length
  if (!hasData) {
    add('NO_DATA', 0, 'no transactions yet: import a statement to see your cashflow health')
  } else if (activeDays === 0) {
    add('NO_ACTIVITY', -50, `no transactions in the last ${days} days`)
  } else {
    if (liquidity !== null && liquidity < 1) {
      add(
        'OUTFLOW_EXCEEDS_INFLOW',
        -Math.min(30, Math.round(30 * (1 - liquidity)) || 1),
        `outflow exceeded inflow: only ${Math.round(liquidity * 100)}% of spending was covered`,
      )
    }
    if (runway !== null && runway < 30) {
      add('RUNWAY_SHORT', -30, `at the current burn rate the balance lasts ${runway} days`)
    } else if (runway !== null && runway < 90) {
      add('RUNWAY_LIMITED', -15, `at the current burn rate the balance lasts ${runway} days`)
    }
    if (burn30 > 0 && burn90 > 0 && burn30 > 1.25 * burn90) {
      add('BURN_ACCELERATING', -10, 'the 30-day burn rate is more than 25% above the 90-day rate')
    }
    const previous = loadDailySeries(db, tenantId, addDays(from, -days), addDays(from, -1))
    const previousInflow = sum(previous.inflow)
    if (previousInflow > 0 && inflow < 0.8 * previousInflow) {
      add(
        'INFLOW_DECLINING',
        -10,
        `inflow fell ${Math.round((1 - inflow / previousInflow) * 100)}% against the previous ${days} days`,
      )
    }
    const inflowDays = window.inflow.filter((v) => v > 0).length
    if (inflowDays < days / 2) {
      add('IRREGULAR_INFLOW', -10, `money came in on only ${inflowDays} of ${days} days`)
    }
  }
  if (balance !== null && state.threshold !== null && balance < state.threshold) {
    add('BALANCE_BELOW_THRESHOLD', -20, 'the balance is below the low-balance threshold')
  }
  if (balance === null && hasData) add('BALANCE_UNKNOWN', 0, 'no transaction carried a balance yet')
  if (hasData && reasons.every((r) => r.impact === 0)) {
    add('HEALTHY', 0, 'inflow covers outflow and no warning signs were found')
  }
  const score = Math.max(0, Math.min(100, 100 + sum(reasons.map((r) => r.impact))))

  return {
    tenant_id: tenantId,
    from,
    to,
    as_of: to,
    days,
    inflow: toMajor(inflow),
    outflow: toMajor(outflow),
    net: toMajor(inflow - outflow),
    balance: balance === null ? null : toMajor(balance),
    balance_at: state.balanceAt,
    burn_rate: round2(toMajor(burn30)),
    burn_rate_90: round2(toMajor(burn90)),
    runway_days: runway,
    liquidity_ratio: liquidity === null ? null : round2(liquidity),
    low_balance_threshold: state.threshold === null ? null : toMajor(state.threshold),
    health_score: score,
    reasons,
  }
}
