import { api, scoped } from '../api.ts'
import { card, date, day, h, money, num, section, showError, skeleton, table } from '../ui.ts'

interface Item {
  receipt_number: string
  transaction_id: string
  source: string
  channel: string | null
  occurred_at: string
  amount: number
  direction: 'in' | 'out'
  balance: number | null
}

interface Reconciliation {
  period: { from: string; to: string } | null
  statement_rows: number
  missing_from_statement: { count: number; data: Item[] }
  not_reported_live: { count: number; data: Item[] }
  amount_mismatches: { count: number; data: Array<Item & { reported: Item[] }> }
  balance: {
    opening: number
    statement_closing: number
    platform_running: number
    difference: number
  } | null
}

const signed = (i: Item) => money(i.direction === 'out' ? -i.amount : i.amount)
const via = (i: Item) => i.channel ?? i.source

/** The rows of one list, or a sentence saying there are none. */
function listOf(empty: string, items: { count: number; data: Item[] }): HTMLElement {
  if (items.count === 0) return h('p', { class: 'muted' }, empty)
  return h(
    'div',
    {},
    table(
      ['Receipt', 'Date', 'Amount', 'Reported by'],
      items.data.map((i) => [i.receipt_number, date(i.occurred_at), signed(i), via(i)]),
    ),
    items.count > items.data.length
      ? h('p', { class: 'muted' }, `Showing ${num(items.data.length)} of ${num(items.count)}.`)
      : null,
  )
}

/**
 * Reconciliation (GET /api/v1/analytics/reconciliation): for the period an imported statement
 * covers, what the platform recorded that the statement lacks, statement rows no live channel
 * reported, amounts that disagree for one receipt, and the statement's closing balance against
 * the platform's running balance. Shown only; nothing is alerted.
 */
export async function reconciliationView(root: HTMLElement): Promise<void> {
  const from = h('input', { type: 'date', name: 'from', 'aria-label': 'From' }) as HTMLInputElement
  const to = h('input', { type: 'date', name: 'to', 'aria-label': 'To' }) as HTMLInputElement
  const body = h('div', { id: 'reconciliation' }, skeleton())
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Reconciliation period' },
    h('label', {}, 'From', from),
    h('label', {}, 'To', to),
    h('button', { type: 'submit' }, 'Check'),
  )
  const load = async () => {
    body.replaceChildren(skeleton())
    const q = new URLSearchParams()
    if (from.value) q.set('from', from.value)
    if (to.value) q.set('to', to.value)
    const path = `/api/v1/analytics/reconciliation${q.size ? `?${q}` : ''}`
    try {
      body.replaceChildren(render(await api.get<Reconciliation>(scoped(path))))
    } catch (err) {
      body.replaceChildren()
      showError(err)
    }
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    void load()
  })
  root.replaceChildren(
    h('h1', {}, 'Reconciliation'),
    h(
      'p',
      {},
      'Your imported M-Pesa statement against what the platform recorded from payments, SMS and the API.',
    ),
    form,
    body,
  )
  await load()
}

function render(r: Reconciliation): HTMLElement {
  if (!r.period)
    return h(
      'p',
      { id: 'reconciliation-empty' },
      'No imported statement covers this period. Import a statement to reconcile it.',
    )
  const b = r.balance
  return h(
    'div',
    {},
    h(
      'p',
      { id: 'reconciliation-period' },
      `Statement from ${day(r.period.from)} to ${day(r.period.to)}: ${num(r.statement_rows)} rows.`,
    ),
    h(
      'div',
      { class: 'cards' },
      card('Missing from the statement', num(r.missing_from_statement.count)),
      card('Only in the statement', num(r.not_reported_live.count)),
      card('Amounts that disagree', num(r.amount_mismatches.count)),
      b
        ? card(
            'Balance difference',
            money(b.difference),
            `statement ${money(b.statement_closing)}, platform ${money(b.platform_running)}`,
          )
        : null,
    ),
    section(
      'Recorded by the platform, missing from the statement',
      listOf('Every payment the platform recorded is on the statement.', r.missing_from_statement),
    ),
    section(
      'On the statement, never reported live',
      listOf('Every statement row was also reported live.', r.not_reported_live),
    ),
    section(
      'Amounts that disagree',
      r.amount_mismatches.count === 0
        ? h('p', { class: 'muted' }, 'Every receipt has the same amount on every channel.')
        : table(
            ['Receipt', 'Statement', 'Reported live'],
            r.amount_mismatches.data.map((m) => [
              m.receipt_number,
              signed(m),
              m.reported.map((x) => `${signed(x)} (${via(x)})`).join(', '),
            ]),
          ),
    ),
  )
}
