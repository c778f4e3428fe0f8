import { api, scoped } from '../api.ts'
import { cashflowChart, type DailyPoint, type ForecastPoint } from '../chart.ts'
import {
  card,
  date,
  day,
  h,
  money,
  num,
  roundMoney,
  section,
  showError,
  skeleton,
  table,
} from '../ui.ts'
import { type StatementImport, unprovenImports, warningCards } from './statement-proof.ts'

const isoDay = (d: Date) => d.toISOString().slice(0, 10)

interface Summary {
  total_transactions: number
  total_amount: number
  average_transaction: number
  active_days: number
  total_in: number
  total_out: number
  net: number
}
interface FlowLine {
  inflow: number
  outflow: number
  net: number
  kinds: Record<string, { label: string; inflow: number; outflow: number; net: number }>
}
type HealthStatus = 'healthy' | 'watch' | 'at_risk' | 'unproven' | 'no_data'
interface CashSummary {
  as_of: string
  days: number
  inflow: number
  outflow: number
  net: number
  financing: FlowLine
  transfers: FlowLine
  health_status: HealthStatus
  data_quality: { verdict: string; finding: string | null } | null
  balance: number | null
  balance_at: string | null
  burn_rate: number
  burn_rate_90: number
  runway_days: number | null
  liquidity_ratio: number | null
  health_score: number
  reasons: { code: string; message: string; impact: number }[]
}
interface Forecast {
  model: string
  horizon: number
  points: (ForecastPoint & { balance: number | null })[]
  params: { alpha: number; beta: number; gamma: number; phi: number; season_length: number } | null
  history: { days: number }
  backtest: { mase: number | null; mape: number | null } | null
}
interface Customer {
  counterparty: string
  counterparty_name: string | null
  counterparty_phone: string | null
  count: number
  total: number
  total_in: number
  total_out: number
  last_seen: string
  segment: string | null
}
interface Insight {
  type: string
  title: string
  message: string
  numbers: Record<string, unknown>
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

/** Segment names as people say them. */
const label = (k: string) => k.replace(/_/g, ' ')

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

function howCalculated(fc: Forecast): HTMLElement {
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

/** Top counterparties in one direction: customers pay the tenant, suppliers are paid by it. */
function counterpartyTable(list: Customer[], who: 'Customer' | 'Supplier', id: string) {
  if (!list.length)
    return h(
      'p',
      { class: 'muted' },
      who === 'Customer' ? 'No customers yet.' : 'No suppliers yet.',
    )
  return table(
    who === 'Customer'
      ? [who, 'Payments', 'Paid you', 'Last seen', 'Segment']
      : [who, 'Payments', 'You paid', 'Last seen'],
    list.map((c) => {
      const row = [
        h(
          'span',
          {},
          c.counterparty_name ?? c.counterparty,
          c.counterparty_phone && c.counterparty_name
            ? h('small', { class: 'muted' }, ` ${c.counterparty_phone}`)
            : null,
        ),
        num(c.count),
        h('span', { class: 'money' }, money(who === 'Customer' ? c.total_in : c.total_out)),
        day(c.last_seen),
      ]
      return who === 'Customer' ? [...row, c.segment ? label(c.segment) : '—'] : row
    }),
    { id },
  )
}

export async function overviewView(root: HTMLElement, tenantId: string): Promise<void> {
  const cards = h('div', { class: 'cards', id: 'summary-cards' }, skeletonCards(4))
  const asOf = h('p', { class: 'muted', id: 'as-of' })
  const chartBox = h('div', { class: 'chart', id: 'cashflow-chart' }, skeleton(6))
  const chartNote = h('div', { id: 'forecast-note' })
  const health = h('div', { class: 'cards', id: 'cashflow-health' }, skeletonCards(5))
  const reasons = h('ul', { class: 'reasons', id: 'health-reasons' })
  const flows = h('div', { class: 'cards', id: 'cashflow-lines' })
  const moves = h('div', { id: 'balance-moves-box' })
  const warnings = h('div', { id: 'data-warnings-box' })
  const customers = h('div', { id: 'top-customers' }, skeleton())
  const suppliers = h('div', { id: 'top-suppliers' }, skeleton())
  const insights = h('div', { id: 'insights' }, skeleton())
  root.append(
    warnings,
    asOf,
    section('Summary', cards),
    section('Earned and spent each day, and the next 30 days', chartNote, chartBox),
    section('Cashflow health', health, reasons),
    section('Earned, spent, borrowed and moved', flows, moves),
    h(
      'div',
      { class: 'two' },
      section('Top customers', customers),
      section('Top suppliers', suppliers),
    ),
    section('Insights', insights),
  )

  const cashP = api.get<CashSummary>(`/api/v1/cashflow/summary/${encodeURIComponent(tenantId)}`)
  // The chart ends on the last day with data (the summary's as_of), not today: a statement that
  // ended weeks ago is not weeks of nothing.
  const dailyP = cashP
    .catch(() => null)
    .then((c) => {
      const to = c?.as_of ?? isoDay(new Date(Date.now() + 3 * 3600_000))
      const from = isoDay(new Date(Date.parse(`${to}T12:00:00Z`) - 89 * 86_400_000))
      return api.get<{ data: DailyPoint[] }>(scoped(`/api/v1/cashflow/daily?from=${from}&to=${to}`))
    })
  const [summary, daily, forecast, cash, top, paid, ins, unproven] = await Promise.allSettled([
    api.get<Summary>(scoped('/api/v1/analytics/summary')),
    dailyP,
    api.get<Forecast>(scoped('/api/v1/cashflow/forecast?horizon=30')),
    cashP,
    api.get<{ data: Customer[] }>(scoped('/api/v1/analytics/customers?direction=in&limit=10')),
    api.get<{ data: Customer[] }>(scoped('/api/v1/analytics/customers?direction=out&limit=10')),
    api.get<{ data: Insight[]; as_of: string }>(scoped('/api/v1/analytics/insights')),
    unprovenImports(),
  ])

  const notAddingUp: StatementImport[] = unproven.status === 'fulfilled' ? unproven.value : []
  if (unproven.status === 'rejected') showError(unproven.reason)
  const warning = warningCards(notAddingUp)
  if (warning) warnings.replaceChildren(warning)

  if (summary.status === 'fulfilled') {
    const s = summary.value
    const metric = (key: keyof Summary, title: string, text: string, hint?: string) => {
      const c = card(title, text, hint)
      c.dataset.key = key
      c.dataset.value = String(s[key])
      return c
    }
    cards.replaceChildren(
      metric('total_in', 'Money in', money(s.total_in)),
      metric('total_out', 'Money out', money(s.total_out)),
      metric('net', 'Net', money(s.net), s.net >= 0 ? 'more in than out' : 'more out than in'),
      metric('total_transactions', 'Transactions', num(s.total_transactions)),
      metric('average_transaction', 'Average transaction', money(s.average_transaction)),
      metric('active_days', 'Active days', num(s.active_days)),
    )
  } else {
    cards.replaceChildren()
    showError(summary.reason)
  }

  const today = isoDay(new Date(Date.now() + 3 * 3600_000))
  const asOfDay = ins.status === 'fulfilled' ? ins.value.as_of : null
  if (asOfDay && asOfDay < today)
    asOf.textContent = `Your latest transaction is from ${day(asOfDay)}: the comparisons below end that day.`

  chartBox.replaceChildren()
  if (daily.status === 'fulfilled') {
    const fc = forecast.status === 'fulfilled' ? forecast.value : null
    const rows = daily.value.data
    if (rows.some((d) => d.inflow || d.outflow)) {
      // Drawn once the box has its width (after layout).
      requestAnimationFrame(() => {
        const chart = cashflowChart(chartBox, rows, fc?.points ?? [])
        chartBox.dataset.points = String(rows.length + (fc?.points.length ?? 0))
        chartBox.dataset.ready = 'true'
        new ResizeObserver(() =>
          chart.setSize({ width: Math.max(260, chartBox.clientWidth), height: 280 }),
        ).observe(chartBox)
      })
      if (fc) {
        const balance = cash.status === 'fulfilled' ? cash.value.balance : null
        chartNote.append(
          h('p', { class: 'forecast-sentence' }, forecastSentence(fc, balance)),
          fc.model === 'insufficient_history' ? '' : howCalculated(fc),
        )
      }
    } else
      chartBox.append(
        h(
          'p',
          { class: 'muted' },
          'No transactions yet: ',
          h('a', { href: '#/import' }, 'import a statement'),
          ' or take a payment.',
        ),
      )
  } else showError(daily.reason)
  if (forecast.status === 'rejected') showError(forecast.reason)

  if (cash.status === 'fulfilled') {
    const c = cash.value
    const empty = c.reasons.some((r) => r.code === 'NO_DATA')
    // A statement that does not add up is never shown as healthy, whatever the score says.
    const status: HealthStatus =
      c.health_status === 'healthy' &&
      (notAddingUp.length > 0 || c.data_quality?.verdict === 'does_not_add_up')
        ? 'unproven'
        : c.health_status
    const healthCard = card(
      'Health',
      empty ? 'no data yet' : `${STATUS_WORDS[status]} · ${num(c.health_score)} / 100`,
    )
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
                ` (${r.impact > 0 ? '+' : '−'}${Math.abs(r.impact)} points)`,
              )
            : null,
        ),
      ),
    )
  } else {
    health.replaceChildren()
    showError(cash.reason)
  }

  if (top.status === 'fulfilled')
    customers.replaceChildren(counterpartyTable(top.value.data, 'Customer', 'customers-table'))
  else showError(top.reason)
  if (paid.status === 'fulfilled')
    suppliers.replaceChildren(counterpartyTable(paid.value.data, 'Supplier', 'suppliers-table'))
  else showError(paid.reason)

  if (ins.status === 'fulfilled') {
    const list = ins.value.data
    insights.replaceChildren(
      list.length
        ? h(
            'ul',
            { class: 'insights' },
            list.map((i) =>
              h('li', { 'data-type': i.type }, h('strong', {}, i.title), h('div', {}, i.message)),
            ),
          )
        : h('p', { class: 'muted' }, 'No insights yet.'),
    )
  } else showError(ins.reason)
}

const skeletonCards = (n: number) =>
  Array.from({ length: n }, () => h('div', { class: 'card' }, skeleton(2)))
