import { api, pickTenant } from '../api.ts'
import { date, h, section, table } from '../ui.ts'

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
export async function operatorView(root: HTMLElement, go: (hash: string) => void): Promise<void> {
  const res = await api.get<{ data: TenantRow[] }>('/api/v1/tenants')
  const tenants = res.data.filter((t) => t.id !== 'platform')
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
            ['Tenant', 'Plan', 'Isolation', 'Status', 'Created', ''],
            tenants.map((t) => [
              h('span', {}, h('strong', {}, t.name), h('br'), h('code', {}, t.id)),
              t.plan,
              t.isolation,
              t.status,
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
