import { api, can, isOperator, scoped } from '../api.ts'
import { date, day, formValues, h, money, section, showError, table } from '../ui.ts'
import { categories } from './transactions.ts'

const roles = ['Admin', 'Manager', 'Analyst', 'Viewer']
const webhookEvents = [
  'payment.success',
  'payment.failed',
  'transaction.categorized',
  'subscription.renewed',
  'statement.processed',
  'low.balance.alert',
]

/** A form whose submit calls the API and shows any problem it answers. */
function formWith(
  id: string,
  label: string,
  fields: HTMLElement[],
  submit: string,
  onSubmit: (v: Record<string, string>, form: HTMLFormElement) => Promise<void>,
): HTMLFormElement {
  const button = h('button', { type: 'submit' }, submit) as HTMLButtonElement
  const form = h(
    'form',
    { class: 'inline', id, 'aria-label': label },
    ...fields,
    button,
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    button.disabled = true
    try {
      await onSubmit(formValues(form), form)
      form.reset()
    } catch (err) {
      showError(err)
    } finally {
      button.disabled = false
    }
  })
  return form
}

const field = (label: string, input: HTMLElement) => h('label', {}, label, input)

/** Admins: users, webhooks, subscription and invoices, rules. Managers: rules only. */
export async function settingsView(root: HTMLElement, tenantId: string): Promise<void> {
  const panels: Promise<HTMLElement>[] = []
  if (can('admin'))
    panels.push(usersPanel(tenantId), webhooksPanel(tenantId), billingPanel(tenantId))
  if (can('manage')) panels.push(rulesPanel(tenantId))
  root.append(...(await Promise.all(panels)))
}

interface User {
  id: string
  email: string
  role: string
  status: string
}

async function usersPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'users' })
  const invited = h('div', { role: 'status' })
  const load = async () => {
    try {
      const res = await api.get<{ data: User[] }>(
        `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`,
      )
      list.replaceChildren(
        table(
          ['Email', 'Role', 'Status'],
          res.data.map((u) => [u.email, u.role, u.status]),
          { id: 'users-table' },
        ),
      )
    } catch (err) {
      showError(err)
    }
  }
  const form = formWith(
    'invite-form',
    'Invite a user',
    [
      field(
        'Email',
        h('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' }),
      ),
      field(
        'Role',
        h(
          'select',
          { name: 'role' },
          roles.map((r) => h('option', { value: r, selected: r === 'Viewer' }, r)),
        ),
      ),
    ],
    'Invite',
    async (v) => {
      const res = await api.send<{
        email: string
        invite_token?: string
        expires_at?: string
      }>('POST', `/api/v1/tenants/${encodeURIComponent(tenantId)}/users`, {
        email: v.email,
        role: v.role,
      })
      invited.replaceChildren(
        h(
          'p',
          {},
          `Invitation for ${res.email}: give them this token to accept at /api/v1/auth/accept-invite `,
          h('code', { class: 'token' }, res.invite_token ?? ''),
          res.expires_at ? ` (expires ${date(res.expires_at)})` : '',
        ),
      )
      await load()
    },
  )
  await load()
  return section('Users and roles', form, invited, list)
}

interface Endpoint {
  id: string
  url: string
  events: string[]
  status: string
  disabled_reason: string | null
}
interface Delivery {
  id: string
  event: string
  status: string
  attempt_count: number
  last_status_code: number | null
  last_error: string | null
  updated_at: string
  endpoint_id: string
}

async function webhooksPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'webhooks' })
  const deliveries = h('div', { id: 'deliveries' })
  const load = async () => {
    const [hooks, dels] = await Promise.allSettled([
      api.get<{ data: Endpoint[] }>(scoped('/api/v1/webhooks')),
      api.get<{ data: Delivery[] }>(scoped('/api/v1/webhooks/deliveries?limit=20')),
    ])
    if (hooks.status === 'fulfilled')
      list.replaceChildren(
        hooks.value.data.length
          ? table(
              ['URL', 'Events', 'Status'],
              hooks.value.data.map((w) => [
                h('code', {}, w.url),
                w.events.join(', '),
                w.disabled_reason ? `${w.status} (${w.disabled_reason})` : w.status,
              ]),
              { id: 'webhooks-table' },
            )
          : h('p', { class: 'muted' }, 'No webhook endpoints yet.'),
      )
    else showError(hooks.reason)
    if (dels.status === 'fulfilled')
      deliveries.replaceChildren(
        dels.value.data.length
          ? table(
              ['Event', 'Status', 'Attempts', 'Last answer', 'Updated', ''],
              dels.value.data.map((d) => [
                d.event,
                h('span', { class: `status-${d.status}` }, d.status),
                String(d.attempt_count),
                d.last_status_code ? String(d.last_status_code) : (d.last_error ?? '—'),
                date(d.updated_at),
                d.status === 'dead' || d.status === 'delivered'
                  ? h(
                      'button',
                      {
                        type: 'button',
                        'aria-label': `Replay ${d.event} delivery ${d.id}`,
                        onclick: () =>
                          api
                            .send('POST', `/api/v1/webhooks/deliveries/${d.id}/replay`)
                            .then(load, showError),
                      },
                      'Replay',
                    )
                  : '',
              ]),
              { id: 'deliveries-table' },
            )
          : h('p', { class: 'muted' }, 'No deliveries yet.'),
      )
    else showError(dels.reason)
  }
  const form = formWith(
    'webhook-form',
    'Register a webhook',
    [
      field(
        'URL',
        h('input', { name: 'url', type: 'url', placeholder: 'https://…', required: true }),
      ),
      field(
        'Signing secret',
        h('input', { name: 'secret', required: true, minlength: 8, autocomplete: 'off' }),
      ),
      field(
        'Events',
        h(
          'select',
          { name: 'events', multiple: true, size: 3, required: true },
          webhookEvents.map((e) => h('option', { value: e, selected: e === 'payment.success' }, e)),
        ),
      ),
    ],
    'Register',
    async (v, form) => {
      const events = [
        ...(form.elements.namedItem('events') as HTMLSelectElement).selectedOptions,
      ].map((o) => o.value)
      await api.send('POST', '/api/v1/webhooks', {
        tenant_id: tenantId,
        url: v.url,
        secret: v.secret,
        events,
      })
      await load()
    },
  )
  const sent = h('div', { role: 'status' })
  const trigger = formWith(
    'trigger-form',
    'Send a test event',
    [
      field(
        'Test event',
        h(
          'select',
          { name: 'event' },
          webhookEvents.map((e) => h('option', { value: e }, e)),
        ),
      ),
    ],
    'Send test event',
    async (v) => {
      const res = await api.send<{ deliveries: string[] }>('POST', '/api/v1/webhooks/trigger', {
        tenant_id: tenantId,
        event: v.event,
        data: { test: true },
      })
      sent.textContent = `${v.event} queued for ${res.deliveries.length} endpoint(s).`
      await load()
    },
  )
  const refresh = h(
    'button',
    { type: 'button', class: 'small', id: 'refresh-deliveries', onclick: () => void load() },
    'Refresh',
  )
  await load()
  return section(
    'Webhooks',
    form,
    list,
    trigger,
    sent,
    h('h3', {}, 'Recent deliveries ', refresh),
    deliveries,
  )
}

interface Subscription {
  plan: string
  status: string
  current_period_end: string
  grace_period_ends: string | null
  credit: number
}
interface Invoice {
  id: string
  number: string
  status: string
  period_start: string
  period_end: string
  total: number
  currency: string
  due_at: string
}

async function billingPanel(tenantId: string): Promise<HTMLElement> {
  const sub = h('div', { id: 'subscription' })
  const invoices = h('div', { id: 'invoices' })
  const paying = h('div', { role: 'status' })
  const [s, inv] = await Promise.allSettled([
    api.get<Subscription>(`/api/v1/billing/subscriptions/${encodeURIComponent(tenantId)}`),
    api.get<{ data: Invoice[] }>(
      isOperator()
        ? `/api/v1/billing/invoices?tenant_id=${encodeURIComponent(tenantId)}`
        : '/api/v1/billing/invoices',
    ),
  ])
  if (s.status === 'fulfilled') {
    const v = s.value
    sub.append(
      h(
        'p',
        {},
        'Plan ',
        h('strong', {}, v.plan),
        ` · ${v.status.replace('_', ' ')} · period ends ${day(v.current_period_end)}`,
        v.grace_period_ends ? ` · grace period ends ${day(v.grace_period_ends)}` : '',
        v.credit ? ` · credit ${money(v.credit)}` : '',
      ),
    )
  } else showError(s.reason)
  const payForm = (i: Invoice) => {
    const form = h(
      'form',
      { class: 'inline', 'aria-label': `Pay invoice ${i.number}` },
      h('input', {
        name: 'phone_number',
        required: true,
        inputmode: 'numeric',
        pattern: '254[17][0-9]{8}',
        placeholder: '2547XXXXXXXX',
        'aria-label': `M-Pesa phone for ${i.number}`,
      }),
      h('button', { type: 'submit' }, `Pay ${i.number}`),
    ) as HTMLFormElement
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      api
        .send<{ checkout_request_id: string }>('POST', `/api/v1/billing/invoices/${i.id}/pay`, {
          phone_number: formValues(form).phone_number,
        })
        .then((r) =>
          paying.replaceChildren(
            h(
              'p',
              {},
              `Payment prompt for ${i.number} sent (`,
              h('code', {}, r.checkout_request_id),
              '); the invoice turns paid when the customer confirms.',
            ),
          ),
        )
        .catch(showError)
    })
    return form
  }
  if (inv.status === 'fulfilled')
    invoices.append(
      inv.value.data.length
        ? table(
            ['Number', 'Period', 'Total', 'Status', 'Due', ''],
            inv.value.data.map((i) => [
              i.number,
              `${day(i.period_start)} – ${day(i.period_end)}`,
              money(i.total),
              h('span', { class: `status-${i.status}` }, i.status.replace('_', ' ')),
              day(i.due_at),
              h(
                'div',
                { class: 'row-actions' },
                h(
                  'button',
                  {
                    type: 'button',
                    onclick: () =>
                      api
                        .download(`/api/v1/billing/invoices/${i.id}/pdf`, `${i.number}.pdf`)
                        .catch(showError),
                  },
                  `PDF ${i.number}`,
                ),
                i.status === 'open' || i.status === 'past_due' ? payForm(i) : null,
              ),
            ]),
            { id: 'invoices-table' },
          )
        : h('p', { class: 'muted' }, 'No invoices yet.'),
    )
  else showError(inv.reason)
  invoices.append(paying)
  return section('Subscription and invoices', sub, invoices)
}

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

async function rulesPanel(tenantId: string): Promise<HTMLElement> {
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
  const form = formWith(
    'rule-form',
    'Add a categorization rule',
    [
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
    'Add rule',
    async (v) => {
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
  )
  await load()
  return section('Categorization rules', form, list)
}
