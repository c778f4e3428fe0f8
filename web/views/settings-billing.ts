import { api, isOperator } from '../api.ts'
import { day, formValues, h, money, section, showError, table } from '../ui.ts'

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

export async function billingPanel(tenantId: string): Promise<HTMLElement> {
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
