import { WEBHOOK_EVENTS } from '../../schema/vocabulary.ts'
import { api, scoped } from '../api.ts'
import { date, h, section, showError, table } from '../ui.ts'
import { copyButton, field, formWith } from './settings-form.ts'

/** SPEC §6: the events an endpoint may subscribe to. */
const webhookEvents = WEBHOOK_EVENTS

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

export async function webhooksPanel(tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'webhooks' })
  const deliveries = h('div', { id: 'deliveries' })
  const created = h('div', { role: 'status', id: 'webhook-created' })
  const noEndpoint = h(
    'p',
    { class: 'muted', id: 'trigger-hint' },
    'Register an endpoint first: a test event goes to your endpoints.',
  )
  let triggerButton: HTMLButtonElement | null = null
  const load = async () => {
    const [hooks, dels] = await Promise.allSettled([
      api.get<{ data: Endpoint[] }>(scoped('/api/v1/webhooks')),
      api.get<{ data: Delivery[] }>(scoped('/api/v1/webhooks/deliveries?limit=20')),
    ])
    if (hooks.status === 'fulfilled') {
      const none = hooks.value.data.length === 0
      if (triggerButton) triggerButton.disabled = none
      noEndpoint.hidden = !none
      list.replaceChildren(endpointsTable(hooks.value.data))
    } else showError(hooks.reason)
    if (dels.status === 'fulfilled')
      deliveries.replaceChildren(deliveriesTable(dels.value.data, load))
    else showError(dels.reason)
  }
  const form = formWith({
    id: 'webhook-form',
    label: 'Register a webhook',
    fields: registerFields(),
    submit: 'Register',
    onSubmit: async (v, form) => {
      const events = [
        ...form.querySelectorAll<HTMLInputElement>('input[name="events"]:checked'),
      ].map((o) => o.value)
      if (events.length === 0) throw new Error('choose at least one event')
      const res = await api.send<{ id: string; url: string; secret?: string }>(
        'POST',
        '/api/v1/webhooks',
        { tenant_id: tenantId, url: v.url, ...(v.secret ? { secret: v.secret } : {}), events },
      )
      created.replaceChildren()
      if (res.secret) showSecret(created, res.url, res.secret)
      await load()
    },
  })
  const sent = h('div', { role: 'status' })
  const trigger = formWith({
    id: 'trigger-form',
    label: 'Send a test event',
    fields: [
      field(
        'Test event',
        h(
          'select',
          { name: 'event' },
          webhookEvents.map((e) => h('option', { value: e }, e)),
        ),
      ),
    ],
    submit: 'Send test event',
    onSubmit: async (v) => {
      const res = await api.send<{ deliveries: string[] }>('POST', '/api/v1/webhooks/trigger', {
        tenant_id: tenantId,
        event: v.event,
        data: { test: true },
      })
      sent.textContent = `${v.event} queued for ${res.deliveries.length} endpoint(s).`
      await load()
    },
  })
  triggerButton = trigger.querySelector('button[type="submit"]')
  const refresh = h(
    'button',
    { type: 'button', class: 'small', id: 'refresh-deliveries', onclick: () => void load() },
    'Refresh',
  )
  await load()
  return section(
    'Webhooks',
    form,
    created,
    list,
    trigger,
    noEndpoint,
    sent,
    h('h3', {}, 'Recent deliveries ', refresh),
    deliveries,
  )
}

/** The tenant's endpoints, or a line saying there are none. */
function endpointsTable(endpoints: Endpoint[]) {
  return endpoints.length
    ? table(
        ['URL', 'Events', 'Status'],
        endpoints.map((w) => [
          h('code', {}, w.url),
          w.events.join(', '),
          w.disabled_reason ? `${w.status} (${w.disabled_reason})` : w.status,
        ]),
        { id: 'webhooks-table' },
      )
    : h('p', { class: 'muted' }, 'No webhook endpoints yet.')
}

/** The recent deliveries, a delivered or dead one with a button that replays it. */
function deliveriesTable(deliveries: Delivery[], reload: () => Promise<void>) {
  return deliveries.length
    ? table(
        ['Event', 'Status', 'Attempts', 'Last answer', 'Updated', ''],
        deliveries.map((d) => [
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
                      .then(reload, showError),
                },
                'Replay',
              )
            : '',
        ]),
        { id: 'deliveries-table' },
      )
    : h('p', { class: 'muted' }, 'No deliveries yet.')
}

/** The fields of the registration form: URL, optional secret and the events. */
function registerFields() {
  return [
    field(
      'URL',
      h('input', { name: 'url', type: 'url', placeholder: 'https://…', required: true }),
    ),
    field(
      'Signing secret (optional)',
      h('input', {
        name: 'secret',
        minlength: 8,
        autocomplete: 'off',
        placeholder: 'leave empty to have one made',
      }),
    ),
    h(
      'fieldset',
      { class: 'checks', id: 'webhook-events' },
      h('legend', {}, 'Events'),
      webhookEvents.map((e) =>
        h(
          'label',
          {},
          h('input', {
            type: 'checkbox',
            name: 'events',
            value: e,
            checked: e === 'payment.success',
          }),
          e,
        ),
      ),
    ),
  ]
}

/** The signing secret of a new endpoint, shown this once with a copy button. */
function showSecret(created: HTMLElement, url: string, secret: string) {
  // The service keeps it encrypted and never answers it again: this is the one showing.
  const code = h('code', { id: 'webhook-secret' }, secret)
  created.append(
    h(
      'p',
      {},
      `Signing secret for ${url}, shown this once: keep it where your server verifies the signatures.`,
    ),
    h('div', { class: 'inline secret' }, code, copyButton('copy-webhook-secret', secret, code)),
  )
}
