import { api, scoped } from '../api.ts'
import { exportBar, reportExports } from '../exports.ts'
import { coverage, periodPicker, rangeQuery, resolve } from '../period.ts'
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
  const cov = await coverage()
  const draw = async () => {
    const period = resolve(cov)
    const query = rangeQuery(period)
    const body = h('div', { id: 'reconciliation' }, skeleton())
    root.replaceChildren(
      h('h1', {}, 'Reconciliation'),
      h(
        'p',
        {},
        'Your imported M-PESA statement against what mmp recorded from your till, payment prompts, SMS and the API.',
      ),
      periodPicker(cov, period, draw),
      exportBar(reportExports('reconciliation', query)) ?? '',
      body,
    )
    try {
      const path = `/api/v1/analytics/reconciliation?${query}`
      body.replaceChildren(render(await api.get<Reconciliation>(scoped(path))))
    } catch (err) {
      body.replaceChildren()
      showError(err)
    }
  }
  await draw()
}

function render(r: Reconciliation): HTMLElement {
  if (!r.period)
    return h(
      'p',
      { id: 'reconciliation-empty' },
      'No imported statement covers this period. Import a statement (or pick the statement’s period above) to reconcile it.',
    )
  const b = r.balance
  // Nothing live to compare with: every row "never reported live" would say nothing useful.
  if (
    r.missing_from_statement.count === 0 &&
    r.amount_mismatches.count === 0 &&
    r.not_reported_live.count === r.statement_rows
  )
    return h(
      'div',
      { id: 'reconciliation-no-live', class: 'empty' },
      h(
        'p',
        {},
        `Statement from ${day(r.period.from)} to ${day(r.period.to)}: ${num(r.statement_rows)} rows, and nothing recorded live over those days to check them against.`,
      ),
      h(
        'p',
        {},
        'Reconciliation compares the statement with the payments mmp hears of as they happen. ',
        h('a', { href: '#/settings' }, 'Register your till or paybill'),
        ' or take payments with prompts, then import the next statement to see both side by side.',
      ),
    )
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
