import type { CashHealth, FlowLine, HealthStatus, Reason } from '../../schema/cashflow/views.ts'
import { KIND_LABELS, type Kind } from '../../schema/vocabulary.ts'
import type { Db } from '../kernel/db.ts'
import { round2, toMajor } from '../kernel/money.ts'
import { addDays, daysBetween } from '../kernel/time-zone.ts'
import type { CashflowState } from './alerts.ts'
import type { DataQuality } from './data-quality.ts'
import { type KindTotals, loadBalanceLines, loadDailySeries } from './series.ts'

export interface Summary extends CashHealth {
  tenant_id: string
  from: string
  to: string
  /** Every movement: what the balance follows. */
  total: { inflow: number; outflow: number; net: number }
  /** Loans drawn over operating inflow in the window; null when nothing was drawn. */
  loan_reliance: number | null
  low_balance_threshold: number | null
  data_quality: DataQuality | null
}

/**
 * The business relies on loans when the draws of the window reach this share of what it earned
 * (or it drew while earning nothing). A fifth: an owner who borrows a shilling for every five
 * earned is funding the business with credit, not with sales.
 */
export const LOAN_RELIANCE_SHARE = 0.2
/** Highest score with a warning that rules out "healthy" (deficit, loans, unproven data). */
const CAP_WATCH = 69
const CAP_UNPROVEN = 59
const CAP_AT_RISK = 49

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0)
const kes = (cents: number) => `KES ${Math.round(Math.abs(toMajor(cents))).toLocaleString('en-KE')}`

/** Average daily operating net outflow (cents) over the `days` days ending `to`; 0 when not burning. */
function burnRate(db: Db, tenantId: string, to: string, days: number): number {
  const s = loadDailySeries(db, { tenantId, from: addDays(to, 1 - days), to })
  return Math.max(0, (sum(s.outflow) - sum(s.inflow)) / days)
}

export function lineOf(totals: KindTotals): FlowLine {
  const kinds: FlowLine['kinds'] = {}
  for (const [kind, k] of Object.entries(totals.kinds)) {
    kinds[kind] = {
      label: KIND_LABELS[kind as Kind] ?? kind,
      inflow: toMajor(k.inflow),
      outflow: toMajor(k.outflow),
      net: toMajor(k.inflow - k.outflow),
      count: k.count,
    }
  }
  return {
    inflow: toMajor(totals.inflow),
    outflow: toMajor(totals.outflow),
    net: toMajor(totals.inflow - totals.outflow),
    kinds,
  }
}

export interface SummaryInput {
  to: string
  days: number
  state: CashflowState
  /** The first day with data, null for a tenant without any (an empty tenant is not penalised). */
  first: string | null
  dataQuality: DataQuality | null
}

/**
 * Cashflow health over the `days` days ending `to`. Only operating flows count (schema/vocabulary
 * KIND_ROLE revenue and expense): loans, savings, transfers and cash move the balance and are
 * shown as their own lines. Burn rate is the average daily operating deficit over the last 30
 * (and 90) days, runway the balance divided by the 30-day burn rate, liquidity ratio operating
 * inflow over outflow. The score starts at 100 and each reason takes off the points it names; a
 * deficit, reliance on loans or a statement that does not add up cap it below "healthy".
 */
export function summarizeCashflow(db: Db, tenantId: string, input: SummaryInput): Summary {
  const { to, days, state, first, dataQuality } = input
  const hasData = first !== null
  const from = addDays(to, 1 - days)
  const window = loadDailySeries(db, { tenantId, from, to })
  const everything = loadDailySeries(db, { tenantId, from, to, scope: 'all' })
  const lines = loadBalanceLines(db, { tenantId, from, to })
  const inflow = sum(window.inflow)
  const outflow = sum(window.outflow)
  const burn30 = burnRate(db, tenantId, to, 30)
  const burn90 = burnRate(db, tenantId, to, 90)
  const balance = state.balance
  let runway: number | null = null
  if (burn30 > 0 && balance !== null) runway = Math.max(0, Math.round((balance / burn30) * 10) / 10)
  const liquidity = outflow > 0 ? inflow / outflow : null
  const draws = lines.financing.kinds.loan_drawn?.inflow ?? 0
  const reliance = draws > 0 && inflow > 0 ? draws / inflow : null

  const reasons: Reason[] = []
  const add = (code: string, impact: number, message: string) =>
    reasons.push({ code, impact, message })
  /** A reason that also caps the score: it takes its points, or more to bring the score to `cap`. */
  const cap = (code: string, penalty: number, max: number, message: string) => {
    const current = 100 + sum(reasons.map((r) => r.impact))
    add(code, Math.min(penalty, max - current), message)
  }
  const activeDays = everything.inflow.filter((v, i) => v > 0 || everything.outflow[i]! > 0).length
  // Days of the window the data covers: a tenant whose data starts mid-window is not "irregular".
  const coveredFrom = first && first > from ? first : from
  const coveredDays = coveredFrom > to ? 0 : daysBetween(coveredFrom, to) + 1
  const deficit = hasData && activeDays > 0 && outflow > inflow
  const onLoans = hasData && draws > 0 && (inflow === 0 || draws >= LOAN_RELIANCE_SHARE * inflow)
  if (!hasData) {
    add('NO_DATA', 0, 'no transactions yet: import a statement to see your cashflow health')
  } else if (activeDays === 0) {
    add('NO_ACTIVITY', -50, `no transactions in the last ${days} days`)
  } else {
    if (runway !== null && runway < 30) {
      add('RUNWAY_SHORT', -30, `at the current burn rate the balance lasts ${runway} days`)
    } else if (runway !== null && runway < 90) {
      add('RUNWAY_LIMITED', -15, `at the current burn rate the balance lasts ${runway} days`)
    }
    if (burn30 > 0 && burn90 > 0 && burn30 > 1.25 * burn90) {
      add('BURN_ACCELERATING', -10, 'the 30-day burn rate is more than 25% above the 90-day rate')
    }
    // Compared only with a previous period the data wholly covers.
    const previousFrom = addDays(from, -days)
    if (first && first <= previousFrom) {
      const previous = loadDailySeries(db, { tenantId, from: previousFrom, to: addDays(from, -1) })
      const previousInflow = sum(previous.inflow)
      if (previousInflow > 0 && inflow < 0.8 * previousInflow) {
        add(
          'INFLOW_DECLINING',
          -10,
          `money earned fell ${Math.round((1 - inflow / previousInflow) * 100)}% against the previous ${days} days`,
        )
      }
    }
    const inflowDays = window.inflow.filter((v) => v > 0).length
    if (inflowDays < coveredDays / 2) {
      add('IRREGULAR_INFLOW', -10, `money came in on only ${inflowDays} of ${coveredDays} days`)
    }
  }
  if (balance !== null && state.threshold !== null && balance < state.threshold) {
    add('BALANCE_BELOW_THRESHOLD', -20, 'the balance is below the low-balance threshold')
  }
  if (deficit) {
    const covered = liquidity === null ? 0 : Math.round(liquidity * 100)
    cap(
      'OUTFLOW_EXCEEDS_INFLOW',
      -Math.min(30, Math.round(30 * (1 - (liquidity ?? 0))) || 1),
      CAP_WATCH,
      `a deficit: the business spent ${kes(outflow)} and earned ${kes(inflow)} in ${days} days, so earnings covered only ${covered}% of spending`,
    )
  }
  if (onLoans) {
    cap(
      'RELIES_ON_LOANS',
      -15,
      CAP_WATCH,
      reliance === null
        ? `${kes(draws)} of loans (Fuliza, overdraft) was drawn while nothing was earned`
        : `${kes(draws)} of loans (Fuliza, overdraft) was drawn, ${Math.round(reliance * 100)}% of what the business earned: it relies on borrowing`,
    )
  }
  if (deficit && onLoans) {
    cap(
      'DEFICIT_FUNDED_BY_LOANS',
      -10,
      CAP_AT_RISK,
      'the deficit was paid for with loans, which must be repaid out of future earnings',
    )
  }
  const unproven = dataQuality?.verdict === 'does_not_add_up'
  if (unproven) {
    cap(
      'STATEMENT_DOES_NOT_ADD_UP',
      -10,
      CAP_UNPROVEN,
      `the latest statement does not add up, so these figures are incomplete${dataQuality.finding ? `: ${dataQuality.finding}` : ''}`,
    )
  }
  if (balance === null && hasData) add('BALANCE_UNKNOWN', 0, 'no transaction carried a balance yet')
  if (hasData && reasons.every((r) => r.impact === 0)) {
    add('HEALTHY', 0, 'earnings cover spending and no warning signs were found')
  }
  const score = Math.max(0, Math.min(100, 100 + sum(reasons.map((r) => r.impact))))
  const status: HealthStatus = !hasData
    ? 'no_data'
    : score < 50
      ? 'at_risk'
      : unproven
        ? 'unproven'
        : score >= 80 && !deficit && !onLoans
          ? 'healthy'
          : 'watch'

  const allIn = sum(everything.inflow)
  const allOut = sum(everything.outflow)
  return {
    tenant_id: tenantId,
    from,
    to,
    as_of: to,
    days,
    inflow: toMajor(inflow),
    outflow: toMajor(outflow),
    net: toMajor(inflow - outflow),
    financing: lineOf(lines.financing),
    transfers: lineOf(lines.transfers),
    total: { inflow: toMajor(allIn), outflow: toMajor(allOut), net: toMajor(allIn - allOut) },
    loan_reliance: reliance === null ? null : round2(reliance),
    balance: balance === null ? null : toMajor(balance),
    balance_at: state.balanceAt,
    burn_rate: round2(toMajor(burn30)),
    burn_rate_90: round2(toMajor(burn90)),
    runway_days: runway,
    liquidity_ratio: liquidity === null ? null : round2(liquidity),
    low_balance_threshold: state.threshold === null ? null : toMajor(state.threshold),
    health_score: score,
    health_status: status,
    reasons,
    data_quality: dataQuality,
  }
}
