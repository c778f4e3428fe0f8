import { api, scoped } from '../api.ts'
import { cashflowChart, type DailyPoint, type ForecastPoint } from '../chart.ts'
import { card, date, day, h, money, num, section, showError, table } from '../ui.ts'

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
interface CashSummary {
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
  points: ForecastPoint[]
  backtest: { mase: number | null; mape: number | null } | null
}
interface Customer {
  counterparty: string
  counterparty_name: string | null
  counterparty_phone: string | null
  count: number
  total: number
  last_seen: string
  segment: string | null
}
interface Insight {
  type: string
  title: string
  message: string
  numbers: Record<string, unknown>
}

/** Words for the numbers insights carry (snake_case keys otherwise). */
const label = (k: string) => k.replace(/_/g, ' ')

export async function overviewView(root: HTMLElement, tenantId: string): Promise<void> {
  const cards = h('div', { class: 'cards', id: 'summary-cards' })
  const chartBox = h('div', { class: 'chart', id: 'cashflow-chart' })
  const chartNote = h('p', { class: 'muted', id: 'forecast-note' })
  const health = h('div', { class: 'cards', id: 'cashflow-health' })
  const reasons = h('ul', { class: 'reasons', id: 'health-reasons' })
  const customers = h('div', { id: 'top-customers' })
  const insights = h('div', { id: 'insights' })
  root.append(
    section('Summary', cards),
    section('Daily inflow and outflow (90 days), with the 30-day forecast', chartBox, chartNote),
    section('Cashflow health', health, reasons),
    h('div', { class: 'two' }, section('Top customers', customers), section('Insights', insights)),
  )

  const from = isoDay(new Date(Date.now() - 89 * 86_400_000))
  const [summary, daily, forecast, cash, top, ins] = await Promise.allSettled([
    api.get<Summary>(scoped('/api/v1/analytics/summary')),
    api.get<{ data: DailyPoint[] }>(scoped(`/api/v1/cashflow/daily?from=${from}`)),
    api.get<Forecast>(scoped('/api/v1/cashflow/forecast?horizon=30')),
    api.get<CashSummary>(`/api/v1/cashflow/summary/${encodeURIComponent(tenantId)}`),
    api.get<{ data: Customer[] }>(scoped('/api/v1/analytics/customers?limit=10')),
    api.get<{ data: Insight[] }>(scoped('/api/v1/analytics/insights')),
  ])

  if (summary.status === 'fulfilled') {
    const s = summary.value
    const metric = (key: keyof Summary, title: string, text: string) => {
      const c = card(title, text)
      c.dataset.key = key
      c.dataset.value = String(s[key])
      return c
    }
    cards.append(
      metric('total_transactions', 'Transactions', num(s.total_transactions)),
      metric('total_amount', 'Total amount', money(s.total_amount)),
      metric('average_transaction', 'Average transaction', money(s.average_transaction)),
      metric('active_days', 'Active days', num(s.active_days)),
      metric('total_in', 'Money in', money(s.total_in)),
      metric('total_out', 'Money out', money(s.total_out)),
      metric('net', 'Net', money(s.net)),
    )
  } else showError(summary.reason)

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
      if (fc)
        chartNote.textContent =
          fc.model === 'insufficient_history'
            ? 'Not enough history for a forecast yet.'
            : `Forecast: ${fc.model.replace(/_/g, ' ')}, shaded bands are the 80 % and 95 % intervals${
                fc.backtest?.mase != null ? `; backtest MASE ${num(fc.backtest.mase, 2)}` : ''
              }.`
    } else
      chartBox.append(
        h('p', { class: 'muted' }, 'No transactions yet: import a statement or take a payment.'),
      )
  } else showError(daily.reason)
  if (forecast.status === 'rejected') showError(forecast.reason)

  if (cash.status === 'fulfilled') {
    const c = cash.value
    health.append(
      card('Balance', money(c.balance), c.balance_at ? `as of ${date(c.balance_at)}` : undefined),
      card('Burn rate (per day)', money(c.burn_rate), `90 days: ${money(c.burn_rate_90)}`),
      card('Runway', c.runway_days === null ? 'not burning' : `${num(c.runway_days)} days`),
      card(
        'Liquidity ratio',
        c.liquidity_ratio === null ? '—' : num(c.liquidity_ratio, 2),
        'money in / money out',
      ),
      card('Health score', `${num(c.health_score)} / 100`),
    )
    reasons.append(
      ...c.reasons.map((r) =>
        h(
          'li',
          {},
          r.message,
          h(
            'span',
            { class: r.impact < 0 ? 'out' : 'in' },
            ` (${r.impact > 0 ? '+' : ''}${r.impact})`,
          ),
        ),
      ),
    )
  } else showError(cash.reason)

  if (top.status === 'fulfilled') {
    const list = top.value.data
    customers.append(
      list.length
        ? table(
            ['Customer', 'Payments', 'Total', 'Last seen', 'Segment'],
            list.map((c) => [
              h(
                'span',
                {},
                c.counterparty_name ?? c.counterparty,
                c.counterparty_phone && c.counterparty_name
                  ? h('small', { class: 'muted' }, ` ${c.counterparty_phone}`)
                  : null,
              ),
              num(c.count),
              money(c.total),
              day(c.last_seen),
              c.segment ? label(c.segment) : '—',
            ]),
          )
        : h('p', { class: 'muted' }, 'No customers yet.'),
    )
  } else showError(top.reason)

  if (ins.status === 'fulfilled') {
    const list = ins.value.data
    insights.append(
      list.length
        ? h(
            'ul',
            { class: 'insights' },
            list.map((i) =>
              h(
                'li',
                { 'data-type': i.type },
                h('strong', {}, i.title),
                h('div', {}, i.message),
                Object.keys(i.numbers).length
                  ? h(
                      'small',
                      { class: 'muted' },
                      Object.entries(i.numbers)
                        .filter(([, v]) => typeof v !== 'object' || v === null)
                        .map(
                          ([k, v]) =>
                            `${label(k)}: ${typeof v === 'number' ? num(v, 2) : (v ?? '—')}`,
                        )
                        .join(' · '),
                    )
                  : null,
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No insights yet.'),
    )
  } else showError(ins.reason)
}
