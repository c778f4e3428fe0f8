import { api, scoped } from '../api.ts'
import { h, section, showError, table } from '../ui.ts'
import { field, formWith } from './settings-form.ts'
import { categories } from './transactions.ts'

interface Rule {
  id: string
  name: string
  match: string
  pattern: string
  category: string
  priority: number
  direction: string | null
  active: boolean
}

export async function rulesPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'rules' })
  const load = async () => {
    try {
      const res = await api.get<{ data: Rule[] }>(scoped('/api/v1/categorize/rules'))
      list.replaceChildren(
        h(
          'details',
          {},
          h('summary', {}, `${res.data.length} active rules, highest priority first`),
          rulesTable(res.data),
        ),
      )
    } catch (err) {
      showError(err)
    }
  }
  const rulesTable = (rules: Rule[]) =>
    table(
      ['Name', 'Match', 'Pattern', 'Direction', 'Category', 'Priority'],
      rules.map((r) => [
        r.name,
        r.match,
        h('code', {}, r.pattern),
        r.direction ?? 'any',
        r.category,
        String(r.priority),
      ]),
      { id: 'rules-table' },
    )
  const form = formWith({
    id: 'rule-form',
    label: 'Add a categorization rule',
    fields: [
      field('Name', h('input', { name: 'name', required: true, maxlength: 100 })),
      field(
        'Match',
        h(
          'select',
          { name: 'match' },
          h('option', { value: 'keyword' }, 'keyword'),
          h('option', { value: 'regex' }, 'regex'),
        ),
      ),
      field('Pattern', h('input', { name: 'pattern', required: true, maxlength: 500 })),
      field(
        'Category',
        h(
          'select',
          { name: 'category' },
          categories.map((c) => h('option', { value: c }, c)),
        ),
      ),
      field(
        'Priority',
        h('input', { name: 'priority', type: 'number', value: 100, min: 0, max: 10000 }),
      ),
    ],
    submit: 'Add rule',
    onSubmit: async (v) => {
      await api.send('POST', '/api/v1/categorize/rules', {
        tenant_id: tenantId,
        name: v.name,
        match: v.match,
        pattern: v.pattern,
        category: v.category,
        priority: Number(v.priority),
      })
      await load()
    },
  })
  await load()
  return section('Categorization rules', form, list)
}
