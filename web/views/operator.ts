import { api, pickTenant } from '../api.ts'
import { date, h, money, num, section, table } from '../ui.ts'

interface TenantRow {
  id: string
  name: string
  plan: string
  isolation: string
  status: string
  timezone: string
  created_at: string
}

/**
 * The platform operator's start page: every tenant (GET /api/v1/tenants) with a button that opens
 * its dashboard; the operator then sees that tenant's pages through `?tenant_id=`.
 */
const FIGURES_FOR = 50

/**
 * Each tenant's all-time count and net, filled in as the summaries arrive (the first
 * FIGURES_FOR tenants only: one request each).
 */
function tenantFigures() {
  const cells = new Map<string, { count: HTMLElement; net: HTMLElement }>()
  return (id: string) => {
    let c = cells.get(id)
    if (!c) {
      c = { count: h('span', {}, '…'), net: h('span', {}, '…') }
      cells.set(id, c)
      const mine = c
      if (cells.size > FIGURES_FOR) {
        mine.count.textContent = '—'
        mine.net.textContent = '—'
      } else
        api
          .get<{ total_transactions: number; net: number }>(
            `/api/v1/analytics/summary?tenant_id=${encodeURIComponent(id)}`,
          )
          .then(
            (s) => {
              mine.count.textContent = num(s.total_transactions)
              mine.net.textContent = money(s.net)
            },
            (err: { status?: number }) => {
              mine.count.textContent = `— (${err.status ?? 'error'})`
              mine.net.textContent = '—'
            },
          )
    }
    return c
  }
}

export async function operatorView(root: HTMLElement, go: (hash: string) => void): Promise<void> {
  const res = await api.get<{ data: TenantRow[] }>('/api/v1/tenants')
  const tenants = res.data.filter((t) => t.id !== 'platform')
  const figures = tenantFigures()
  root.append(
    section(
      'Tenants',
      h(
        'p',
        { class: 'muted' },
        'Pick a tenant to see its dashboard as the operator (the picker in the header does the same).',
      ),
      tenants.length
        ? table(
            ['Tenant', 'Plan', 'Isolation', 'Status', 'Transactions', 'Net', 'Created', ''],
            tenants.map((t) => [
              h('span', {}, h('strong', {}, t.name), h('br'), h('code', {}, t.id)),
              t.plan,
              t.isolation,
              t.status,
              figures(t.id).count,
              figures(t.id).net,
              date(t.created_at),
              h(
                'button',
                {
                  type: 'button',
                  'data-tenant': t.id,
                  onclick: () => {
                    pickTenant(t.id)
                    go('#/overview')
                  },
                },
                `Open ${t.name}`,
              ),
            ]),
            { id: 'tenant-list' },
          )
        : h('p', { class: 'muted' }, 'No tenants yet: create one with POST /api/v1/tenants.'),
    ),
  )
}
