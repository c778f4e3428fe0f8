import type { CashHealth, ForecastPoint, HealthStatus } from '../../schema/cashflow/views.ts'
import { card, date, day, h, money, num, roundMoney, table } from '../ui.ts'
import type { StatementImport } from './statement-proof.ts'

/** The cashflow panels of the overview: health, earned and spent, balance moves, the forecast. */
export interface CashSummary extends CashHealth {
  data_quality: { verdict: string; finding: string | null } | null
}
export interface Forecast {
  model: string
  horizon: number
  points: ForecastPoint[]
  params: { alpha: number; beta: number; gamma: number; phi: number; season_length: number } | null
  history: { days: number }
  backtest: { mase: number | null; mape: number | null } | null
}
const STATUS_WORDS: Record<HealthStatus, string> = {
  healthy: 'Healthy',
  watch: 'Needs watching',
  at_risk: 'At risk',
  unproven: 'Not proven: a statement does not add up',
  no_data: 'No data yet',
}

/**
 * Cashflow in the owner's words: what was earned and spent (the only money health counts), then
 * loans and savings and transfers on their own lines, each kind that occurred.
 */
function flowCards(c: CashSummary): HTMLElement[] {
  const drawn = c.financing.kinds.loan_drawn?.inflow ?? 0
  const repaid = c.financing.kinds.loan_repaid?.outflow ?? 0
  const period = `${num(c.days)} days to ${day(c.as_of)}`
  const line = (key: string, title: string, value: string, hint: string) => {
    const el = card(title, value, hint)
    el.dataset.line = key
    return el
  }
  return [
    line('earned', 'Earned', money(c.inflow), `customer payments, ${period}`),
    line('spent', 'Spent', money(c.outflow), 'suppliers, bills, charges, airtime'),
    line(
      'operating-net',
      'Earned less spent',
      money(c.net),
      c.net < 0 ? 'a deficit: more spent than earned' : 'loans and transfers not counted',
    ),
    line('loans', 'Loans (Fuliza, overdraft)', `${money(drawn)} drawn`, `${money(repaid)} repaid`),
    line(
      'transfers',
      'Savings and transfers',
      money(c.transfers.net),
      `in ${money(c.transfers.inflow)} · out ${money(c.transfers.outflow)}`,
    ),
  ]
}

/** Every kind of money that is neither earned nor spent, one row each. */
function balanceMovesTable(c: CashSummary): HTMLElement | null {
  const rows = [
    ...Object.entries(c.financing.kinds).map(([k, v]) => ['Loans', k, v] as const),
    ...Object.entries(c.transfers.kinds).map(([k, v]) => ['Transfers', k, v] as const),
  ]
  if (!rows.length) return null
  return table(
    ['Line', 'Kind', 'In', 'Out'],
    rows.map(([group, _, v]) => [
      group,
      v.label,
      h('span', { class: 'money' }, money(v.inflow)),
      h('span', { class: 'money' }, money(v.outflow)),
    ]),
    { id: 'balance-moves' },
  )
}

/**
 * The forecast in one sentence. The balance band assumes the daily errors are independent: the
 * half-widths of the daily 80 % intervals add in quadrature over the horizon.
 */
export function forecastSentence(fc: Forecast, balance: number | null): string {
  const last = fc.points.at(-1)
  if (fc.model === 'insufficient_history' || !last)
    return 'There is not enough history for a forecast yet: it needs a few weeks of transactions.'
  const days = fc.points.length
  const net = fc.points.reduce((s, p) => s + p.net, 0)
  const low = Math.sqrt(fc.points.reduce((s, p) => s + (p.net - p.lower_80) ** 2, 0))
  const high = Math.sqrt(fc.points.reduce((s, p) => s + (p.upper_80 - p.net) ** 2, 0))
  if (last.balance !== null && balance !== null)
    return `In ${days} days your balance is likely to be about ${roundMoney(last.balance)}, between ${roundMoney(last.balance - low)} and ${roundMoney(last.balance + high)}.`
  return `Over the next ${days} days about ${roundMoney(Math.abs(net))} more is likely to ${net >= 0 ? 'come in than go out' : 'go out than come in'} (between ${roundMoney(net - low)} and ${roundMoney(net + high)} net).`
}

export function howCalculated(fc: Forecast): HTMLElement {
  const p = fc.params
  return h(
    'details',
    { class: 'how' },
    h('summary', {}, 'How is this calculated?'),
    h(
      'p',
      { class: 'muted' },
      `The forecast follows the pattern of your last ${num(fc.history.days)} days: the weekly rhythm, the trend (flattening further out) and the recurring payments it found. The shaded bands hold the day's net 8 times in 10 (darker) and 19 times in 20 (lighter).`,
      fc.backtest?.mase != null
        ? ` Tested on the last weeks it had, its daily error was ${num(fc.backtest.mase, 2)} times that of simply repeating last week (below 1 is better).`
        : '',
      p
        ? ` Model: Holt–Winters, additive and damped (α ${num(p.alpha, 2)}, β ${num(p.beta, 2)}, γ ${num(p.gamma, 2)}, φ ${num(p.phi, 2)}, season ${p.season_length} days).`
        : '',
    ),
  )
}

/** Fills the health cards, their reasons and the earned/spent/borrowed lines from the summary. */
export function fillHealth(
  c: CashSummary,
  notAddingUp: StatementImport[],
  boxes: { health: HTMLElement; flows: HTMLElement; moves: HTMLElement; reasons: HTMLElement },
): void {
  const { health, flows, moves, reasons } = boxes
  if (c.reasons.some((r) => r.code === 'NO_DATA')) {
    health.replaceChildren(
      h(
        'p',
        { class: 'empty' },
        'Your balance, how long it lasts and a health score appear here once mmp has your transactions: ',
        h('a', { href: '#/import' }, 'import a statement'),
        ' or register your till in Settings.',
      ),
    )
    flows.replaceChildren(
      h(
        'p',
        { class: 'empty' },
        'What you earned, spent, borrowed (Fuliza, loans) and moved to savings appears here, each on its own line.',
      ),
    )
    return
  }
  // A statement that does not add up is never shown as healthy, whatever the score says.
  const status: HealthStatus =
    c.health_status === 'healthy' &&
    (notAddingUp.length > 0 || c.data_quality?.verdict === 'does_not_add_up')
      ? 'unproven'
      : c.health_status
  const healthCard = card('Health', `${STATUS_WORDS[status]} · ${num(c.health_score)} / 100`)
  healthCard.dataset.status = status
  healthCard.classList.add(`health-${status}`)
  health.replaceChildren(
    card('Balance', money(c.balance), c.balance_at ? `as of ${date(c.balance_at)}` : undefined),
    card(
      'Spending more than earning, per day',
      money(c.burn_rate),
      `over 90 days: ${money(c.burn_rate_90)}`,
    ),
    card(
      'Runway',
      c.runway_days === null ? 'not burning' : `${num(c.runway_days)} days`,
      'how long the balance lasts',
    ),
    card(
      'Money in per shilling out',
      c.liquidity_ratio === null ? '—' : num(c.liquidity_ratio, 2),
      `30 days to ${day(c.as_of)}`,
    ),
    healthCard,
  )
  flows.replaceChildren(...flowCards(c))
  const movesTable = balanceMovesTable(c)
  if (movesTable) moves.replaceChildren(movesTable)
  reasons.append(
    ...c.reasons.map((r) =>
      h(
        'li',
        { 'data-code': r.code },
        r.message,
        // Only reasons that moved the score carry a figure.
        r.impact
          ? h(
              'span',
              { class: r.impact < 0 ? 'out' : 'in' },
              ` (${r.impact > 0 ? '+' : '-'}${Math.abs(r.impact)} points)`,
            )
          : null,
      ),
    ),
  )
}
