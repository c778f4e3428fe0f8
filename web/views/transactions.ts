import type { TransactionView } from '../../schema/analytics/views.ts'
import { CATEGORIES } from '../../schema/vocabulary.ts'
import { api, can, scoped } from '../api.ts'
import { localPhone } from '../format.ts'
import { date, formValues, h, money, showError, table } from '../ui.ts'

export const categories: readonly string[] = CATEGORIES

type Transaction = TransactionView

export async function transactionsView(root: HTMLElement): Promise<void> {
  const today = new Date().toISOString().slice(0, 10)
  const filters = filterForm(today)
  const list = h('div', { id: 'transactions' })
  const more = h('button', { type: 'button', hidden: true }, 'Load more')
  const exports = can('analyze') ? exportButtons(() => query()) : null
  root.append(
    h('section', { class: 'panel' }, h('h2', {}, 'Transactions'), filters, exports, list, more),
  )

  let cursor: string | null = null
  const rows: Transaction[] = []
  const query = () =>
    new URLSearchParams(Object.entries(formValues(filters)).filter(([, v]) => v)).toString()

  const render = () => {
    list.replaceChildren(
      table(
        ['Date', 'Description', 'Counterparty', 'Amount', 'Category'],
        rows.map(transactionCells),
        { id: 'transactions-table' },
      ),
    )
  }

  const load = async (reset: boolean) => {
    if (reset) {
      rows.length = 0
      cursor = null
    }
    try {
      const page = await api.get<{
        data: Transaction[]
        next_cursor: string | null
        has_more: boolean
      }>(
        scoped(
          `/api/v1/analytics/transactions?limit=50&${query()}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
      )
      rows.push(...page.data)
      cursor = page.next_cursor
      more.hidden = !page.has_more
      render()
      if (!rows.length)
        list.replaceChildren(h('p', { class: 'muted' }, 'No transactions match these filters.'))
    } catch (err) {
      showError(err)
    }
  }
  filters.addEventListener('submit', (e) => {
    e.preventDefault()
    void load(true)
  })
  more.addEventListener('click', () => void load(false))
  await load(true)
}

/** The filters above the list: period, direction, category and a search. */
function filterForm(today: string): HTMLFormElement {
  return h(
    'form',
    { class: 'filters', 'aria-label': 'Filter transactions' },
    h('label', {}, 'From', h('input', { type: 'date', name: 'from', max: today })),
    h('label', {}, 'To', h('input', { type: 'date', name: 'to', max: today })),
    h(
      'label',
      {},
      'Direction',
      h(
        'select',
        { name: 'direction' },
        h('option', { value: '' }, 'Any'),
        h('option', { value: 'in' }, 'In'),
        h('option', { value: 'out' }, 'Out'),
      ),
    ),
    h(
      'label',
      {},
      'Category',
      h(
        'select',
        { name: 'category' },
        h('option', { value: '' }, 'Any'),
        categories.map((c) => h('option', { value: c }, c)),
      ),
    ),
    h('label', {}, 'Search', h('input', { type: 'search', name: 'q', maxlength: 200 })),
    h('button', { type: 'submit' }, 'Apply'),
  ) as HTMLFormElement
}

/** The CSV and PDF exports of what the filters select. */
function exportButtons(query: () => string) {
  return h(
    'div',
    { class: 'actions' },
    h(
      'button',
      {
        type: 'button',
        id: 'export-csv',
        onclick: () =>
          api
            .download(scoped(`/api/v1/analytics/export?format=csv&${query()}`), 'transactions.csv')
            .catch(showError),
      },
      'Export CSV',
    ),
    h(
      'button',
      {
        type: 'button',
        id: 'export-pdf',
        onclick: () =>
          api
            .download(scoped(`/api/v1/analytics/export?format=pdf&${query()}`), 'report.pdf')
            .catch(showError),
      },
      'Export PDF',
    ),
  )
}

/** One row of the table. */
function transactionCells(t: Transaction) {
  return [
    date(t.occurred_at),
    h(
      'span',
      {},
      t.description,
      t.receipt_number ? h('small', { class: 'muted' }, ` ${t.receipt_number}`) : null,
    ),
    t.counterparty_name ?? (t.counterparty_phone ? localPhone(t.counterparty_phone) : '—'),
    h(
      'span',
      { class: t.direction === 'in' ? 'in money' : 'out money' },
      // One minus sign everywhere: money out reads KES -1,234.00, as in every table.
      money(t.direction === 'in' ? t.amount : -t.amount),
    ),
    categoryCell(t),
  ]
}

/** A transaction's category: a select that saves an override for an Analyst, text otherwise. */
function categoryCell(t: Transaction) {
  const source = t.category_source ? `${t.category_source}` : ''
  if (!can('analyze'))
    return h('span', { 'data-transaction': t.id, title: source }, t.category ?? '—')
  const select = h(
    'select',
    {
      'aria-label': `Category of ${t.description} on ${date(t.occurred_at)}`,
      'data-transaction': t.id,
      title: source ? `set by ${source}` : null,
    },
    t.category ? null : h('option', { value: '', selected: true }, '—'),
    categories.map((c) => h('option', { value: c, selected: c === t.category }, c)),
  ) as HTMLSelectElement
  select.addEventListener('change', async () => {
    try {
      await api.send('PUT', scoped(`/api/v1/categorize/transactions/${t.id}`), {
        category: select.value,
      })
      t.category = select.value
      t.category_source = 'override'
      select.classList.add('saved')
      select.dataset.saved = select.value
    } catch (err) {
      select.value = t.category ?? ''
      showError(err)
    }
  })
  return select
}
