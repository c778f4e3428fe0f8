import { api, scoped } from '../api.ts'
import { exportBar, reportExports } from '../exports.ts'
import { coverage, periodPicker, rangeQuery, resolve } from '../period.ts'
import { h, section, showError, skeleton } from '../ui.ts'

export interface Insight {
  type: string
  title: string
  message: string
  numbers: Record<string, unknown>
}

/** Insights as a list, or what will appear and how to get it. */
export function insightList(list: Insight[]): HTMLElement {
  if (!list.length)
    return h(
      'p',
      { class: 'empty' },
      'No insights for this period yet. They appear once a few weeks of payments are in mmp: ',
      h('a', { href: '#/import' }, 'import a statement'),
      ' to see them now.',
    )
  return h(
    'ul',
    { class: 'insights' },
    list.map((i) =>
      h('li', { 'data-type': i.type }, h('strong', {}, i.title), h('div', {}, i.message)),
    ),
  )
}

/** The insights of a period (`from`/`to`), compared with as many days before where data allows. */
export const insightsOf = (query: string) =>
  api.get<{ data: Insight[]; as_of: string }>(scoped(`/api/v1/analytics/insights?${query}`))

export async function insightsView(root: HTMLElement, _tenantId: string): Promise<void> {
  const cov = await coverage()
  const draw = async () => {
    const period = resolve(cov)
    const query = rangeQuery(period)
    const box = h('div', { id: 'insights' }, skeleton())
    root.replaceChildren(
      root.querySelector('h1') ?? '',
      periodPicker(cov, period, draw),
      section('What stands out', exportBar(reportExports('insights', query)) ?? '', box),
    )
    try {
      box.replaceChildren(insightList((await insightsOf(query)).data))
    } catch (err) {
      box.replaceChildren()
      showError(err)
    }
  }
  await draw()
}
