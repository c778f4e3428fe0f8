import { api, currentSession } from '../api.ts'
import { cashflowChart } from '../chart.ts'
import { card, date, h, money, num, section, showError, table } from '../ui.ts'

const isoDay = (d: Date) => d.toISOString().slice(0, 10)

export async function overviewView(root: HTMLElement): Promise<void> {
  const tenantId = currentSession()!.user.tenant_id
  const cards = h('div', { class: 'cards', id: 'summary-cards' })
  const chartBox = h('div', { class: 'chart', id: 'cashflow-chart' })
  const health = h('div', { class: 'cards', id: 'cashflow-health' })
  const customers = h('div', { id: 'top-customers' })
  const insights = h('div', { id: 'insights' })
  root.append(
    section('Summary', cards),
    section('Daily inflow and outflow, with the 30-day forecast', chartBox, health),
    h('div', { class: 'two' }, section('Top customers', customers), section('Insights', insights)),
  )

  const to = new Date()
  const from = new Date(to.getTime() - 90 * 86_400_000)
  const [summary, daily, forecast, cash, top, ins] = await Promise.allSettled([
    api.get('/api/v1/analytics/summary'),
    api.get(`/api/v1/cashflow/daily?from=${isoDay(from)}&to=${isoDay(to)}`),
    api.get('/api/v1/cashflow/forecast?horizon=30'),
    api.get(`/api/v1/cashflow/summary/${tenantId}`),
    api.get('/api/v1/analytics/customers?limit=10'),
    api.get('/api/v1/analytics/insights'),
  ])

  if (summary.status === 'fulfilled') {
    const s = summary.value
    cards.append(
      card('Transactions', num(s.total_transactions)),
      card('Total amount', money(s.total_amount)),
      card('Average transaction', money(s.average_transaction)),
      card('Active days', num(s.active_days)),
      card('Money in', money(s.total_in)),
      card('Money out', money(s.total_out)),
      card('Net', money(s.net)),
    )
  } else showError(summary.reason)

  if (daily.status === 'fulfilled') {
    const points =
      forecast.status === 'fulfilled' && Array.isArray(forecast.value.points)
        ? forecast.value.points
        : []
    const rows = daily.value.data ?? []
    if (rows.length) cashflowChart(chartBox, rows, points)
    else
      chartBox.append(
        h('p', { class: 'muted' }, 'No transactions yet: import a statement or take a payment.'),
      )
  } else showError(daily.reason)

  if (cash.status === 'fulfilled') {
    const c = cash.value
    health.append(
      card('Balance', money(c.balance)),
      card('Burn rate (per day)', money(c.burn_rate)),
      card(
        'Runway',
        c.runway_days === null || c.runway_days === undefined
          ? 'not burning'
          : `${num(c.runway_days)} days`,
      ),
      card('Health score', `${num(c.health_score)} / 100`),
    )
  }

  if (top.status === 'fulfilled') {
    const list: any[] = top.value.data ?? top.value.customers ?? []
    customers.append(
      list.length
        ? table(
            ['Customer', 'Payments', 'Total', 'Last seen', 'Segment'],
            list.map((c) => [
              c.name ?? c.counterparty_name ?? c.phone ?? c.counterparty ?? '—',
              num(c.count ?? c.transactions),
              money(c.total ?? c.total_amount),
              date(c.last_seen),
              c.segment ?? c.rfm_segment ?? '—',
            ]),
          )
        : h('p', { class: 'muted' }, 'No customers yet.'),
    )
  }

  if (ins.status === 'fulfilled') {
    const list: any[] = ins.value.data ?? ins.value.insights ?? []
    insights.append(
      list.length
        ? h(
            'ul',
            { class: 'insights' },
            list.map((i) =>
              h(
                'li',
                {},
                h('strong', {}, i.title ?? i.type),
                h('div', {}, i.message ?? ''),
                i.numbers
                  ? h(
                      'small',
                      { class: 'muted' },
                      Object.entries(i.numbers)
                        .map(([k, v]) => `${k}: ${typeof v === 'number' ? num(v, 2) : v}`)
                        .join(' · '),
                    )
                  : null,
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No insights yet.'),
    )
  }
}
