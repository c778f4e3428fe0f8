import type { CustomerView } from '../../schema/analytics/views.ts'
import { api, scoped } from '../api.ts'
import { exportBar, reportExports } from '../exports.ts'
import { localPhone } from '../format.ts'
import { coverage, periodPicker, rangeQuery, resolve } from '../period.ts'
import { day, h, money, num, section, showError, skeleton, table } from '../ui.ts'

/** A counterparty as the analytics counterparties (and customers) lists answer it. */
export type Counterparty = Omit<CustomerView, 'first_seen' | 'rfm'>

export type Group =
  | 'customers'
  | 'suppliers'
  | 'staff'
  | 'landlord'
  | 'utilities'
  | 'agents'
  | 'lenders'

/** Each group in the owner's words: its tab, its column head, and its empty state. */
export const GROUPS: Record<Group, { tab: string; who: string; empty: string }> = {
  customers: {
    tab: 'Customers',
    who: 'Customer',
    empty:
      'No customer paid you in this period. Customers appear here once you import a statement, register your till or paybill, or take a payment.',
  },
  suppliers: {
    tab: 'Suppliers',
    who: 'Supplier',
    empty:
      'You paid no supplier in this period. Stock and goods bought with M-PESA appear here once a statement is imported.',
  },
  staff: {
    tab: 'Staff',
    who: 'Staff member',
    empty: 'No salaries paid in this period. Payments categorised as Salaries appear here.',
  },
  landlord: {
    tab: 'Landlord',
    who: 'Landlord',
    empty: 'No rent paid in this period. Payments categorised as Rent appear here.',
  },
  utilities: {
    tab: 'Utilities',
    who: 'Utility',
    empty: 'No power, water or internet bills in this period (category Utilities).',
  },
  agents: {
    tab: 'Agents',
    who: 'Agent',
    empty: 'No cash deposited or withdrawn at an agent in this period.',
  },
  lenders: {
    tab: 'Lenders',
    who: 'Lender',
    empty: 'No Fuliza, overdraft or loan in this period.',
  },
}

const name = (c: Counterparty) =>
  h(
    'span',
    {},
    c.counterparty_name ??
      (c.counterparty_phone ? localPhone(c.counterparty_phone) : c.counterparty),
    c.counterparty_phone && c.counterparty_name
      ? h('small', { class: 'muted' }, ` ${localPhone(c.counterparty_phone)}`)
      : null,
  )

/** One group's counterparties as a table, or its empty state. */
export function groupTable(list: Counterparty[], group: Group, id: string): HTMLElement {
  const g = GROUPS[group]
  if (!list.length) return h('p', { class: 'empty' }, g.empty)
  const paidYou = group === 'customers'
  const both = group === 'agents' || group === 'lenders'
  return table(
    [
      g.who,
      'Payments',
      ...(both ? ['In', 'Out'] : [paidYou ? 'Paid you' : 'You paid']),
      'Last seen',
      ...(paidYou ? ['Segment'] : []),
    ],
    list.map((c) => [
      name(c),
      num(c.count),
      ...(both
        ? [
            h('span', { class: 'money' }, money(c.total_in)),
            h('span', { class: 'money' }, money(c.total_out)),
          ]
        : [h('span', { class: 'money' }, money(paidYou ? c.total_in : c.total_out))]),
      day(c.last_seen),
      ...(paidYou ? [c.segment ? c.segment.replace(/_/g, ' ') : '—'] : []),
    ]),
    { id },
  )
}

/** The top of one group over a period. */
export const topOf = (group: Group, query: string, limit = 10) =>
  api.get<{ data: Counterparty[] }>(
    scoped(`/api/v1/analytics/counterparties?group=${group}&limit=${limit}&${query}`),
  )

/** Customers and everyone the business pays, one group at a time, for the chosen period. */
export async function peopleView(root: HTMLElement, _tenantId: string): Promise<void> {
  const cov = await coverage()
  let group: Group = 'customers'
  const draw = async () => {
    const period = resolve(cov)
    const query = rangeQuery(period)
    const box = h('div', { id: 'people-table' }, skeleton())
    const tabs = h(
      'div',
      { class: 'group-tabs', role: 'group', 'aria-label': 'Who' },
      (Object.keys(GROUPS) as Group[]).map((g) =>
        h(
          'button',
          {
            type: 'button',
            class: 'small',
            'data-group': g,
            'aria-pressed': String(g === group),
            onclick: () => {
              group = g
              void draw()
            },
          },
          GROUPS[g].tab,
        ),
      ),
    )
    root.replaceChildren(
      root.querySelector('h1') ?? '',
      periodPicker(cov, period, draw),
      section(
        'Who you deal with',
        tabs,
        exportBar(reportExports('customers', `group=${group}&${query}`, group)) ?? '',
        box,
      ),
    )
    try {
      const list = (await topOf(group, query, 50)).data
      box.replaceChildren(groupTable(list, group, 'people'))
    } catch (err) {
      box.replaceChildren()
      showError(err)
    }
  }
  await draw()
}
