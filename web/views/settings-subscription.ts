import { api } from '../api.ts'
import { day, h, money, num, showError, table } from '../ui.ts'

interface Subscription {
  plan: string
  status: string
  current_period_end: string
  grace_period_ends: string | null
  credit: number
}
interface Plan {
  id: string
  name: string
  price: number
}
interface Usage {
  plan: string
  period_start: string
  period_end: string
  metrics: Record<string, { used: number | null; limit: number | null }>
}

/** What each metered limit is called on the page, in the order shown. */
const METRICS: Array<[string, string]> = [
  ['transactions', 'Transactions this period'],
  ['statements', 'Statements this period'],
  ['users', 'Users'],
  ['webhook_endpoints', 'Webhook endpoints'],
]

/**
 * The subscription: plan and price, usage against the plan's limits this period, and the plan
 * change (prorated on the next invoice). Re-reads itself after a change.
 */
export async function subscriptionPanel(
  tenantId: string,
  { canChange }: { canChange: boolean },
): Promise<HTMLElement> {
  const root = h('div', { id: 'subscription' })
  const tenant = encodeURIComponent(tenantId)
  const load = async () => {
    const [s, u, p] = await Promise.allSettled([
      api.get<Subscription>(`/api/v1/billing/subscriptions/${tenant}`),
      api.get<Usage>(`/api/v1/billing/usage/${tenant}`),
      api.get<{ data: Plan[] }>('/api/v1/billing/plans'),
    ])
    if (s.status === 'rejected') {
      showError(s.reason)
      return
    }
    const sub = s.value
    const plans = p.status === 'fulfilled' ? p.value.data : []
    const current = plans.find((x) => x.id === sub.plan)
    root.replaceChildren(
      h(
        'p',
        { id: 'subscription-plan' },
        'Plan ',
        h('strong', {}, current?.name ?? sub.plan),
        current ? ` · ${money(current.price)} a month` : '',
        ` · ${sub.status.replace('_', ' ')} · period ends ${day(sub.current_period_end)}`,
        sub.grace_period_ends ? ` · grace period ends ${day(sub.grace_period_ends)}` : '',
        sub.credit ? ` · credit ${money(sub.credit)}` : '',
      ),
      ...(u.status === 'fulfilled' ? [usageTable(u.value)] : []),
      ...(canChange && plans.length > 1 ? [changeForm(plans, current)] : []),
    )
    if (u.status === 'rejected') showError(u.reason)
  }
  const changeForm = (plans: Plan[], current: Plan | undefined) => {
    const select = h(
      'select',
      { name: 'plan', id: 'plan-change', 'aria-label': 'New plan' },
      plans
        .filter((x) => x.id !== current?.id)
        .map((x) =>
          h(
            'option',
            { value: x.id },
            `${current && x.price < current.price ? 'Downgrade' : 'Upgrade'} to ${x.name} · ${money(x.price)} a month`,
          ),
        ),
    ) as HTMLSelectElement
    const form = h(
      'form',
      { class: 'inline', id: 'plan-form', 'aria-label': 'Change plan' },
      select,
      h('button', { type: 'submit' }, 'Change plan'),
    )
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      api
        .send('POST', '/api/v1/billing/subscriptions/upgrade', {
          tenant_id: tenantId,
          plan: select.value,
        })
        .then(load, showError)
    })
    return h(
      'div',
      {},
      form,
      h('p', { class: 'muted' }, 'The difference is prorated on the next invoice.'),
    )
  }
  await load()
  return root
}

function usageTable(u: Usage): HTMLElement {
  return table(
    ['Usage', 'Used', 'Limit', ''],
    METRICS.filter(([k]) => u.metrics[k]).map(([k, label]) => {
      const { used, limit } = u.metrics[k]!
      return [
        label,
        num(used),
        limit === null ? 'no limit' : num(limit),
        limit === null || used === null
          ? ''
          : h('meter', {
              min: 0,
              max: limit,
              value: Math.min(used, limit),
              high: limit * 0.8,
              'aria-label': `${label}: ${num(used)} of ${num(limit)}`,
            }),
      ]
    }),
    { id: 'usage-table' },
  )
}
