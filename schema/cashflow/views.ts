/** The shapes the cashflow API answers, read by the service and the dashboard alike. */

/**
 * `healthy` score 80 or more with no warning that caps it; `watch` 50–79; `at_risk` below 50;
 * `unproven` the latest statement does not add up, so the figures cannot be called healthy;
 * `no_data` nothing imported yet.
 */
export type HealthStatus = 'healthy' | 'watch' | 'at_risk' | 'unproven' | 'no_data'

/** One line of money that is neither earned nor spent, each kind on it in the owner's words. */
export interface FlowLine {
  inflow: number
  outflow: number
  net: number
  kinds: Record<
    string,
    { label: string; inflow: number; outflow: number; net: number; count: number }
  >
}

/** One day of the forecast: net flow with its 80 % and 95 % bands, and the projected balance. */
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

/** A window's money by what it was: operating flows, financing and transfers. */
export interface CashFlows {
  /** The day the figures are as of: `to`, the last day with data when no day was asked for. */
  as_of: string
  days: number
  /** Operating flows: money earned (revenue kinds) and spent (expense kinds). */
  inflow: number
  outflow: number
  net: number
  /** Loans drawn and repaid (Fuliza, overdrafts, M-Shwari and other loans). */
  financing: FlowLine
  /** Savings, own transfers, cash at an agent, settlement to the bank, reversals. */
  transfers: FlowLine
}

/** Why the health score is what it is: one reason and the points it moved the score. */
export interface Reason {
  code: string
  message: string
  /** Points this reason moved the health score (negative lowers it). */
  impact: number
}

/** The window's flows with the balance, how fast it is spent and the health they add up to. */
export interface CashHealth extends CashFlows {
  balance: number | null
  balance_at: string | null
  burn_rate: number
  burn_rate_90: number
  runway_days: number | null
  liquidity_ratio: number | null
  health_score: number
  health_status: HealthStatus
  reasons: Reason[]
}
