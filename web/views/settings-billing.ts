import { api, isOperator } from '../api.ts'
import { day, formValues, h, money, section, showError, table } from '../ui.ts'
import { subscriptionPanel } from './settings-subscription.ts'

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
  const invoices = h('div', { id: 'invoices' })
  const paying = h('div', { role: 'status' })
  const [sub, inv] = await Promise.allSettled([
    subscriptionPanel(tenantId, { canChange: true }),
    api.get<{ data: Invoice[] }>(
      isOperator()
        ? `/api/v1/billing/invoices?tenant_id=${encodeURIComponent(tenantId)}`
        : '/api/v1/billing/invoices',
    ),
  ])
  if (sub.status === 'rejected') showError(sub.reason)
  const statusOf = (i: Invoice) =>
    h(
      'span',
      { class: `status-${i.status}`, 'data-status': i.status, id: `invoice-status-${i.id}` },
      i.status.replace('_', ' '),
    )
  /** Polls the invoice after its STK push, like the payments page polls a payment. */
  const watch = async (i: Invoice) => {
    for (let n = 0; n < 120 && paying.isConnected; n++) {
      await new Promise((r) => setTimeout(r, 1000))
      let now: Invoice
      try {
        now = await api.get<Invoice>(`/api/v1/billing/invoices/${encodeURIComponent(i.id)}`)
      } catch (err) {
        showError(err)
        return
      }
      if (now.status === i.status) continue
      document.getElementById(`invoice-status-${i.id}`)?.replaceWith(statusOf(now))
      if (now.status === 'paid') {
        document.getElementById(`pay-${i.id}`)?.remove()
        paying.replaceChildren(h('p', {}, `Invoice ${i.number} is paid. Thank you.`))
      }
      return
    }
  }
  const payForm = (i: Invoice) => {
    const form = h(
      'form',
      { class: 'inline', id: `pay-${i.id}`, 'aria-label': `Pay invoice ${i.number}` },
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
        .then((r) => {
          paying.replaceChildren(
            h(
              'p',
              {},
              `Payment prompt for ${i.number} sent (`,
              h('code', {}, r.checkout_request_id),
              '); the invoice turns paid when the customer confirms.',
            ),
          )
          void watch(i)
        })
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
              statusOf(i),
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
  return section(
    'Subscription and invoices',
    sub.status === 'fulfilled' ? sub.value : null,
    h('h3', {}, 'Invoices'),
    invoices,
  )
}
