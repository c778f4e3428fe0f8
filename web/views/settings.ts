import { api, can, currentSession } from '../api.ts'
import { date, formValues, h, money, section, showError, table } from '../ui.ts'
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

function formWith(
  id: string,
  label: string,
  fields: HTMLElement[],
  submit: string,
  onSubmit: (v: Record<string, string>, form: HTMLFormElement) => Promise<void>,
): HTMLFormElement {
  const form = h(
    'form',
    { class: 'inline', id, 'aria-label': label },
    ...fields,
    h('button', { type: 'submit' }, submit),
  ) as HTMLFormElement
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    try {
      await onSubmit(formValues(form), form)
      form.reset()
    } catch (err) {
      showError(err)
    }
  })
  return form
}

export async function settingsView(root: HTMLElement): Promise<void> {
  const tenantId = currentSession()!.user.tenant_id
  if (can('admin')) {
    root.append(
      await usersPanel(tenantId),
      await webhooksPanel(tenantId),
      await billingPanel(tenantId),
    )
  }
  if (can('manage')) root.append(await rulesPanel())
}

function emptyAfterError(err: unknown): { data: never[] } {
  showError(err)
  return { data: [] }
}

async function usersPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'users' })
  const invited = h('div', { role: 'status' })
  const load = async () => {
    const res = await api.get(`/api/v1/tenants/${tenantId}/users`).catch(emptyAfterError)
    list.replaceChildren(
      table(
        ['Email', 'Role', 'Status'],
        (res.data ?? []).map((u: any) => [u.email, u.role, u.status ?? '']),
      ),
    )
  }
  const form = formWith(
    'invite-form',
    'Invite a user',
    [
      h('input', {
        name: 'email',
        type: 'email',
        placeholder: 'email',
        required: true,
        'aria-label': 'Email',
      }),
      h(
        'select',
        { name: 'role', 'aria-label': 'Role' },
        roles.map((r) => h('option', { value: r }, r)),
      ),
    ],
    'Invite',
    async (v) => {
      const res = await api.send('POST', `/api/v1/tenants/${tenantId}/users`, {
        email: v.email,
        role: v.role,
      })
      invited.replaceChildren(
        h(
          'p',
          {},
          `Invitation for ${res.email}: `,
          h('code', {}, res.invite_token ?? ''),
          ` (expires ${date(res.expires_at)})`,
        ),
      )
      await load()
    },
  )
  await load()
  return section('Users and roles', form, invited, list)
}

async function webhooksPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'webhooks' })
  const deliveries = h('div', { id: 'deliveries' })
  const load = async () => {
    const [hooks, dels] = await Promise.all([
      api.get('/api/v1/webhooks').catch(() => ({ data: [] })),
      api.get('/api/v1/webhooks/deliveries?limit=20').catch(() => ({ data: [] })),
    ])
    list.replaceChildren(
      table(
        ['URL', 'Events', 'Status'],
        (hooks.data ?? []).map((w: any) => [w.url, (w.events ?? []).join(', '), w.status]),
      ),
    )
    deliveries.replaceChildren(
      table(
        ['Event', 'Status', 'Attempts', 'Last attempt', ''],
        (dels.data ?? []).map((d: any) => [
          d.event,
          d.status,
          String(d.attempt_count ?? d.attempts?.length ?? 0),
          date(d.last_attempt_at ?? d.updated_at),
          d.status === 'dead'
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: () =>
                    api
                      .send('POST', `/api/v1/webhooks/deliveries/${d.id}/replay`)
                      .then(load, showError),
                },
                'Replay',
              )
            : '',
        ]),
      ),
    )
  }
  const form = formWith(
    'webhook-form',
    'Register a webhook',
    [
      h('input', {
        name: 'url',
        type: 'url',
        placeholder: 'https://…',
        required: true,
        'aria-label': 'URL',
      }),
      h('input', {
        name: 'secret',
        placeholder: 'signing secret',
        required: true,
        'aria-label': 'Secret',
        minlength: 8,
      }),
      h(
        'select',
        { name: 'events', 'aria-label': 'Event' },
        webhookEvents.map((e) => h('option', { value: e }, e)),
      ),
    ],
    'Register',
    async (v) => {
      await api.send('POST', '/api/v1/webhooks', {
        tenant_id: tenantId,
        url: v.url,
        secret: v.secret,
        events: [v.events],
      })
      await load()
    },
  )
  await load()
  return section('Webhooks', form, list, h('h3', {}, 'Recent deliveries'), deliveries)
}

async function billingPanel(tenantId: string): Promise<HTMLElement> {
  const sub = h('div', { id: 'subscription' })
  const invoices = h('div', { id: 'invoices' })
  const [s, inv] = await Promise.all([
    api.get(`/api/v1/billing/subscriptions/${tenantId}`).catch(() => null),
    api.get('/api/v1/billing/invoices').catch(() => ({ data: [] })),
  ])
  if (s)
    sub.append(
      h(
        'p',
        {},
        `Plan `,
        h('strong', {}, s.plan),
        ` · ${s.status} · renews ${date(s.current_period_end)}`,
      ),
    )
  invoices.append(
    table(
      ['Number', 'Period', 'Total', 'Status', ''],
      (inv.data ?? []).map((i: any) => [
        i.number,
        `${date(i.period_start)} – ${date(i.period_end)}`,
        money(i.total),
        i.status,
        h(
          'span',
          {},
          h(
            'button',
            {
              type: 'button',
              onclick: () =>
                api
                  .download(`/api/v1/billing/invoices/${i.id}/pdf`, `${i.number}.pdf`)
                  .catch(showError),
            },
            'PDF',
          ),
          i.status !== 'paid'
            ? h(
                'button',
                {
                  type: 'button',
                  onclick: () => {
                    const phone = prompt('M-Pesa phone number (2547XXXXXXXX)')
                    if (phone)
                      api
                        .send('POST', `/api/v1/billing/invoices/${i.id}/pay`, {
                          phone_number: phone,
                        })
                        .catch(showError)
                  },
                },
                'Pay',
              )
            : null,
        ),
      ]),
    ),
  )
  return section('Subscription and invoices', sub, invoices)
}

async function rulesPanel(): Promise<HTMLElement> {
  const list = h('div', { id: 'rules' })
  const load = async () => {
    const res = await api.get('/api/v1/categorize/rules').catch(emptyAfterError)
    const rules: any[] = res.data ?? res.rules ?? []
    list.replaceChildren(
      table(
        ['Name', 'Match', 'Pattern', 'Category', 'Priority'],
        rules.map((r) => [r.name, r.match, r.pattern, r.category, String(r.priority)]),
      ),
    )
  }
  const form = formWith(
    'rule-form',
    'Add a categorization rule',
    [
      h('input', { name: 'name', placeholder: 'name', required: true, 'aria-label': 'Rule name' }),
      h('input', {
        name: 'pattern',
        placeholder: 'keyword',
        required: true,
        'aria-label': 'Keyword',
      }),
      h(
        'select',
        { name: 'category', 'aria-label': 'Category' },
        categories.map((c) => h('option', { value: c }, c)),
      ),
      h('input', { name: 'priority', type: 'number', value: 100, 'aria-label': 'Priority' }),
    ],
    'Add rule',
    async (v) => {
      await api.send('POST', '/api/v1/categorize/rules', {
        name: v.name,
        match: 'keyword',
        pattern: v.pattern,
        category: v.category,
        priority: Number(v.priority),
        confidence: 0.9,
      })
      await load()
    },
  )
  await load()
  return section('Categorization rules', form, list)
}
