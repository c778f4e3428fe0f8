import type { SummaryTotals } from '../../schema/analytics/views.ts'
import { api, scoped } from '../api.ts'
import { cashflowChart, type DailyPoint } from '../chart.ts'
import { exportBar } from '../exports.ts'
import {
  type Coverage,
  comparison,
  coverage,
  type Period,
  periodPicker,
  rangeQuery,
  resolve,
} from '../period.ts'
import { card, day, h, money, num, section, showError, skeleton } from '../ui.ts'
import {
  type CashSummary,
  type Forecast,
  fillHealth,
  forecastSentence,
  howCalculated,
} from './cashflow-panels.ts'
import { insightList, insightsOf } from './insights.ts'
import { onboardingChecklist } from './onboarding.ts'
import { groupTable, topOf } from './people.ts'
import { type StatementImport, unprovenImports, warningCards } from './statement-proof.ts'

interface Summary extends SummaryTotals {
  net: number
}

const summaryOf = (query: string) => api.get<Summary>(scoped(`/api/v1/analytics/summary?${query}`))

/** The six summary cards of a period, each with its change on the period before. */
function summaryCards(s: Summary, before: Summary | null, p: Period): HTMLElement[] {
  const metric = (key: keyof Summary, title: string, text: string, hint?: string) => {
    const c = card(title, text, hint)
    c.dataset.key = key
    c.dataset.value = String(s[key])
    // Nothing at all yet: no comparison to speak of.
    if (s.total_transactions > 0 || before)
      c.append(
        h('div', { class: 'compare muted' }, comparison(s[key], before ? before[key] : null, p)),
      )
    return c
  }
  return [
    metric('total_in', 'Money in', money(s.total_in)),
    metric('total_out', 'Money out', money(s.total_out)),
    metric(
      'net',
      'Net',
      money(s.net),
      s.total_transactions === 0 ? undefined : s.net >= 0 ? 'more in than out' : 'more out than in',
    ),
    metric('total_transactions', 'Transactions', num(s.total_transactions)),
    metric('average_transaction', 'Average transaction', money(s.average_transaction)),
    metric('active_days', 'Active days', num(s.active_days)),
  ]
}

/** What a tenant without any transaction sees above its (zero) cards. */
const nothingYet = () =>
  h(
    'div',
    { class: 'empty', id: 'overview-empty' },
    h('strong', {}, 'Nothing here yet. '),
    'Money in and out, your best customers, a cashflow chart with a forecast and insights appear once mmp has your transactions: ',
    h('a', { href: '#/import' }, 'import an M-PESA statement'),
    ', register your till or paybill, or take a payment.',
  )

/**
 * The chart of the period's days (from the first day with data when the period starts earlier),
 * with the forecast after it when the period ends on the last day with data.
 */
async function drawChart({
  box,
  note,
  cov,
  p,
  cash,
}: {
  box: HTMLElement
  note: HTMLElement
  cov: Coverage
  p: Period
  cash: Promise<CashSummary | null>
}): Promise<void> {
  const from = cov.first_day && cov.first_day > p.from ? cov.first_day : p.from
  const anchor = cov.last_day && cov.last_day < cov.today ? cov.last_day : cov.today
  const withForecast = !!cov.last_day && p.to >= anchor
  const [daily, fc, c] = await Promise.all([
    api.get<{ data: DailyPoint[] }>(
      scoped(`/api/v1/cashflow/daily?${rangeQuery({ from, to: p.to })}`),
    ),
    withForecast
      ? api.get<Forecast>(scoped('/api/v1/cashflow/forecast?horizon=30')).catch((err) => {
          showError(err)
          return null
        })
      : Promise.resolve(null),
    cash,
  ])
  box.replaceChildren()
  const rows = daily.data
  if (!rows.some((d) => d.inflow || d.outflow)) {
    box.append(
      h(
        'p',
        { class: 'empty' },
        cov.last_day
          ? `No transactions yet in this period: your data runs from ${day(cov.first_day)} to ${day(cov.last_day)}. Pick another period above.`
          : 'No transactions yet: the days’ money in and out will be drawn here. ',
        cov.last_day ? '' : h('a', { href: '#/import' }, 'Import a statement'),
        cov.last_day ? '' : ' or take a payment.',
      ),
    )
    return
  }
  // Drawn once the box has its width (after layout).
  requestAnimationFrame(() => {
    const chart = cashflowChart(box, rows, fc?.points ?? [])
    box.dataset.points = String(rows.length + (fc?.points.length ?? 0))
    box.dataset.ready = 'true'
    new ResizeObserver(() =>
      chart.setSize({ width: Math.max(260, box.clientWidth), height: 280 }),
    ).observe(box)
  })
  if (!fc) {
    note.append(
      h(
        'p',
        { class: 'muted', id: 'forecast-hidden' },
        `The forecast follows the last day with data (${day(anchor)}): pick a period that ends then to see it.`,
      ),
    )
    return
  }
  const stale = anchor < cov.today
  note.append(
    stale
      ? h(
          'p',
          { class: 'muted', id: 'forecast-anchor' },
          `Your data ends on ${day(anchor)}, so the forecast starts there.`,
        )
      : '',
    h('p', { class: 'forecast-sentence' }, forecastSentence(fc, c?.balance ?? null)),
    fc.model === 'insufficient_history' ? '' : howCalculated(fc),
  )
}

export async function overviewView(root: HTMLElement, tenantId: string): Promise<void> {
  const heading = root.querySelector('h1')
  const checklist = h('div', { id: 'onboarding-box' })
  onboardingChecklist(tenantId)
    .then((panel) => panel && checklist.replaceChildren(panel))
    .catch(showError)
    .finally(() => {
      checklist.dataset.ready = 'true'
    })
  const cov = await coverage()
  const p = resolve(cov)
  const query = rangeQuery(p)
  const cards = h('div', { class: 'cards', id: 'summary-cards' }, skeletonCards(4))
  const chartBox = h('div', { class: 'chart', id: 'cashflow-chart' }, skeleton(6))
  const chartNote = h('div', { id: 'forecast-note' })
  const boxes = {
    health: h('div', { class: 'cards', id: 'cashflow-health' }, skeletonCards(5)),
    reasons: h('ul', { class: 'reasons', id: 'health-reasons' }),
    flows: h('div', { class: 'cards', id: 'cashflow-lines' }),
    moves: h('div', { id: 'balance-moves-box' }),
  }
  const warnings = h('div', { id: 'data-warnings-box' })
  const customers = h('div', { id: 'top-customers' }, skeleton())
  const suppliers = h('div', { id: 'top-suppliers' }, skeleton())
  const insights = h('div', { id: 'insights' }, skeleton())
  root.replaceChildren(
    heading ?? '',
    checklist,
    warnings,
    cov.last_day && cov.last_day < cov.today
      ? h(
          'p',
          { class: 'muted', id: 'as-of' },
          `Your latest transaction is from ${day(cov.last_day)}: the periods below end that day.`,
        )
      : '',
    periodPicker(cov, p, () => overviewView(root, tenantId)),
    cov.last_day ? '' : nothingYet(),
    section(
      'Summary',
      exportBar([
        {
          id: 'export-overview-csv',
          label: 'Download transactions (CSV)',
          path: `/api/v1/analytics/export?format=csv&${query}`,
          file: 'transactions.csv',
        },
        {
          id: 'export-overview-pdf',
          label: 'Download report (PDF)',
          path: `/api/v1/analytics/export?format=pdf&${query}`,
          file: 'report.pdf',
        },
      ]) ?? '',
      cards,
    ),
    section('Earned and spent each day, and the next 30 days', chartNote, chartBox),
    section('Cashflow health', boxes.health, boxes.reasons),
    section('Earned, spent, borrowed and moved', boxes.flows, boxes.moves),
    h(
      'div',
      { class: 'two' },
      section('Top customers', customers, h('a', { href: '#/customers' }, 'All customers')),
      section(
        'Top suppliers',
        suppliers,
        h('a', { href: '#/customers' }, 'Staff, landlord, utilities and others'),
      ),
    ),
    section('Insights', insights, h('a', { href: '#/insights' }, 'All insights')),
  )

  const cashP = api
    .get<CashSummary>(`/api/v1/cashflow/summary/${encodeURIComponent(tenantId)}`)
    .catch((err) => {
      showError(err)
      return null
    })
  const before = p.previous.covered
    ? summaryOf(rangeQuery(p.previous)).catch(() => null)
    : Promise.resolve(null)
  const [summary, chart, top, paid, ins, unproven, previous, cash] = await Promise.allSettled([
    summaryOf(query),
    drawChart({ box: chartBox, note: chartNote, cov, p, cash: cashP }),
    topOf('customers', query),
    topOf('suppliers', query),
    insightsOf(query),
    unprovenImports(),
    before,
    cashP,
  ])

  const notAddingUp: StatementImport[] = unproven.status === 'fulfilled' ? unproven.value : []
  if (unproven.status === 'rejected') showError(unproven.reason)
  const warning = warningCards(notAddingUp)
  if (warning) warnings.replaceChildren(warning)

  if (summary.status === 'fulfilled') {
    const prev = previous.status === 'fulfilled' ? previous.value : null
    cards.replaceChildren(...summaryCards(summary.value, prev, p))
  } else {
    cards.replaceChildren()
    showError(summary.reason)
  }
  if (chart.status === 'rejected') {
    chartBox.replaceChildren()
    showError(chart.reason)
  }
  const c = cash.status === 'fulfilled' ? cash.value : null
  if (c) fillHealth(c, notAddingUp, boxes)
  else boxes.health.replaceChildren()

  if (top.status === 'fulfilled')
    customers.replaceChildren(groupTable(top.value.data, 'customers', 'customers-table'))
  else showError(top.reason)
  if (paid.status === 'fulfilled')
    suppliers.replaceChildren(groupTable(paid.value.data, 'suppliers', 'suppliers-table'))
  else showError(paid.reason)
  if (ins.status === 'fulfilled') insights.replaceChildren(insightList(ins.value.data))
  else showError(ins.reason)
}

const skeletonCards = (n: number) =>
  Array.from({ length: n }, () => h('div', { class: 'card' }, skeleton(2)))
