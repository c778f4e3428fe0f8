import { api, scoped } from '../api.ts'
import { date, h, showError, table } from '../ui.ts'
import { field, formWith } from './settings-form.ts'

/** A till or paybill as `GET /api/v1/payments/c2b/shortcodes` answers it. */
interface Shortcode {
  shortcode: string
  mode: 'tenant' | 'aggregator'
  response_type: 'Completed' | 'Cancelled'
  status: 'registered' | 'released'
  confirmation_url?: string
  validation_url?: string
  registered_at: string
  released_at: string | null
}

/** The addresses M-PESA calls, when the API shows them (to Admins, once). */
function urls(s: Shortcode): HTMLElement | null {
  const shown = [
    ['Confirmation URL', s.confirmation_url],
    ['Validation URL', s.validation_url],
  ].filter(([, v]) => v)
  if (!shown.length) return null
  return h(
    'dl',
    { class: 'c2b-urls' },
    shown.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, h('code', {}, v))]),
  )
}

/**
 * Till and paybill registration (Daraja C2B Register URL through mmp): the tenant's shortcodes,
 * a form to register one and a button to release it. Admins only (the API checks it too).
 */
export async function c2bPanel(_tenantId: string): Promise<HTMLElement> {
  const list = h('div', { id: 'c2b-shortcodes' })
  const notice = h('div', { id: 'c2b-notice', role: 'status' })
  const panel = h(
    'section',
    { class: 'panel', id: 'c2b-settings' },
    h('h2', {}, 'Till and paybill'),
    h(
      'p',
      { class: 'muted' },
      'Register the till or paybill your customers pay: mmp asks M-PESA to tell it of each payment, and each one then appears under Transactions and Payments by itself.',
    ),
    list,
  )
  const load = async () => {
    try {
      const res = await api.get<{ data: Shortcode[] }>(scoped('/api/v1/payments/c2b/shortcodes'))
      const live = res.data.filter((s) => s.status !== 'released')
      list.replaceChildren(
        live.length
          ? table(
              ['Number', 'Kind', 'When mmp cannot answer', 'Registered', ''],
              live.map((s) => [
                h('strong', {}, s.shortcode),
                s.mode === 'aggregator' ? 'Shared paybill' : 'Your own',
                s.response_type === 'Completed' ? 'Accept the payment' : 'Refuse the payment',
                date(s.registered_at),
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'small',
                    'aria-label': `Release ${s.shortcode}`,
                    onclick: () => release(s.shortcode),
                  },
                  'Release',
                ),
              ]),
              { id: 'c2b-table' },
            )
          : h(
              'p',
              { class: 'empty' },
              'No till or paybill yet. Once you register one, every payment customers make to it is listed here and counted in your summary.',
            ),
      )
    } catch (err) {
      list.replaceChildren()
      showError(err)
    }
  }
  const release = async (shortcode: string) => {
    if (!confirm(`Stop receiving payments of ${shortcode} in mmp?`)) return
    try {
      await api.send('DELETE', `/api/v1/payments/c2b/shortcodes/${encodeURIComponent(shortcode)}`)
      notice.replaceChildren(h('p', {}, `${shortcode} released.`))
      await load()
    } catch (err) {
      showError(err)
    }
  }
  const form = formWith({
    id: 'c2b-form',
    label: 'Register a till or paybill',
    fields: [
      field(
        'Till or paybill number',
        h('input', {
          name: 'shortcode',
          required: true,
          inputmode: 'numeric',
          pattern: '\\d{5,7}',
          title: '5 to 7 digits, such as 600100',
          autocomplete: 'off',
        }),
      ),
      field(
        'When mmp cannot answer M-PESA',
        h(
          'select',
          { name: 'response_type' },
          h('option', { value: 'Completed' }, 'Accept the payment'),
          h('option', { value: 'Cancelled' }, 'Refuse the payment'),
        ),
      ),
    ],
    submit: 'Register',
    onSubmit: async (v) => {
      const s = await api.send<Shortcode>('POST', '/api/v1/payments/c2b/register', {
        shortcode: v.shortcode,
        response_type: v.response_type,
      })
      notice.replaceChildren(
        h(
          'p',
          {},
          `${s.shortcode} is registered: payments to it now appear in mmp.`,
          urls(s) ? ' M-PESA calls these addresses (shown this once):' : '',
        ),
        urls(s) ?? '',
      )
      await load()
    },
  })
  panel.append(form, notice)
  await load()
  return panel
}
