import { api, can, scoped } from '../api.ts'
import { date, formValues, h, money, showError, table } from '../ui.ts'

/** A random key; crypto.randomUUID needs a secure context, plain http on a LAN is not one. */
const newKey = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')

interface PaymentStatus {
  checkout_request_id: string
  status: 'pending' | 'success' | 'failed' | 'cancelled' | 'timeout'
  result_code: number | null
  result_desc: string | null
  mpesa_receipt_number: string | null
  amount: number
  phone_number: string
  account_reference: string
  created_at?: string
  updated_at: string
}

export async function paymentsView(root: HTMLElement, tenantId: string): Promise<void> {
  const status = h('div', { id: 'payment-status', role: 'status' })
  const recent = h('div', { id: 'recent-payments' })
  if (can('pay')) {
    const submit = h(
      'button',
      { type: 'submit', class: 'primary', id: 'stk-submit' },
      'Request payment',
    ) as HTMLButtonElement
    // One key per filled-in form: a double submit or a retry cannot prompt the customer twice.
    let idempotencyKey = newKey()
    const form = h(
      'form',
      { class: 'stack', id: 'stk-form', 'aria-label': 'Request a payment' },
      h(
        'label',
        {},
        'Customer phone',
        h('input', {
          name: 'phone_number',
          required: true,
          placeholder: '2547XXXXXXXX',
          inputmode: 'numeric',
          pattern: '254[17][0-9]{8}',
          title: '12 digits: 2547XXXXXXXX or 2541XXXXXXXX',
          autocomplete: 'off',
        }),
      ),
      h(
        'label',
        {},
        'Amount (KES)',
        h('input', { name: 'amount', type: 'number', min: 1, step: 1, required: true }),
      ),
      h(
        'label',
        {},
        'Reference',
        h('input', { name: 'account_reference', maxlength: 12, required: true }),
      ),
      h(
        'label',
        {},
        'Description',
        h('input', { name: 'transaction_desc', maxlength: 13, required: true, value: 'Payment' }),
      ),
      submit,
    ) as HTMLFormElement
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      const v = formValues(form)
      submit.disabled = true
      try {
        const res = await api.send<{ checkout_request_id: string }>(
          'POST',
          '/api/v1/payments/stkpush',
          {
            tenant_id: tenantId,
            phone_number: v.phone_number,
            amount: Number(v.amount),
            account_reference: v.account_reference,
            transaction_desc: v.transaction_desc,
          },
          { 'idempotency-key': idempotencyKey },
        )
        idempotencyKey = newKey()
        status.replaceChildren(
          h('p', {}, 'Prompt sent to ', h('code', {}, v.phone_number ?? ''), '; waiting…'),
        )
        void watch(res.checkout_request_id)
      } catch (err) {
        showError(err)
      } finally {
        submit.disabled = false
      }
    })
    form.addEventListener('input', () => {
      idempotencyKey = newKey()
    })
    root.append(
      h('section', { class: 'panel' }, h('h2', {}, 'Request an M-Pesa payment'), form, status),
    )
  }
  root.append(h('section', { class: 'panel' }, h('h2', {}, 'Recent payments'), recent))

  const watch = async (id: string) => {
    for (let i = 0; i < 120 && status.isConnected; i++) {
      try {
        const s = await api.get<PaymentStatus>(`/api/v1/payments/status/${encodeURIComponent(id)}`)
        status.replaceChildren(
          h(
            'p',
            {},
            'Payment ',
            h('code', {}, id),
            ': ',
            h('strong', { class: `status-${s.status}`, 'data-status': s.status }, s.status),
            s.result_desc ? ` — ${s.result_desc}` : '',
            s.mpesa_receipt_number ? [' · receipt ', h('code', {}, s.mpesa_receipt_number)] : null,
          ),
        )
        if (s.status !== 'pending') {
          void loadRecent()
          return
        }
      } catch (err) {
        showError(err)
        return
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
  }

  const loadRecent = async () => {
    try {
      const page = await api.get<{ data: PaymentStatus[] }>(scoped('/api/v1/payments?limit=20'))
      const rows = page.data
      recent.replaceChildren(
        rows.length
          ? table(
              ['When', 'Phone', 'Amount', 'Reference', 'Status'],
              rows.map((p) => [
                date(p.updated_at ?? p.created_at),
                p.phone_number,
                money(p.amount),
                p.account_reference,
                h('span', { class: `status-${p.status}` }, p.status),
              ]),
            )
          : h('p', { class: 'muted' }, 'No payments yet.'),
      )
    } catch (err) {
      recent.replaceChildren(h('p', { class: 'muted' }, 'The payment list is not available.'))
      showError(err)
    }
  }
  await loadRecent()
}
