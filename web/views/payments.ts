import { api, can, scoped } from '../api.ts'
import { localPhone } from '../format.ts'
import { date, formValues, h, money, showError, table } from '../ui.ts'
import { type PaymentStatus, paymentResult, STATUS_WORDS } from './payment-words.ts'

/** A random key; crypto.randomUUID needs a secure context, plain http on a LAN is not one. */
const newKey = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')

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
          placeholder: '07XXXXXXXX',
          inputmode: 'tel',
          title: '07XXXXXXXX, 01XXXXXXXX, +2547XXXXXXXX or 2547XXXXXXXX',
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
          h(
            'p',
            {},
            `Prompt sent to ${localPhone(v.phone_number)}: waiting for the customer to enter their M-PESA PIN…`,
          ),
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
  void customerPayments(root)

  const watch = async (id: string) => {
    for (let i = 0; i < 120 && status.isConnected; i++) {
      try {
        const s = await api.get<PaymentStatus>(`/api/v1/payments/status/${encodeURIComponent(id)}`)
        status.replaceChildren(paymentResult(s))
        if (s.status !== 'pending' && s.status !== 'unknown') {
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
                localPhone(p.phone_number),
                h('span', { class: 'money' }, money(p.amount)),
                p.account_reference,
                h('span', { class: `status-${p.status}` }, STATUS_WORDS[p.status] ?? p.status),
              ]),
            )
          : h(
              'p',
              { class: 'empty' },
              'No payments yet. Payments you request here, and those customers make to your registered till or paybill, are listed here with their M-PESA receipt.',
            ),
      )
    } catch (err) {
      recent.replaceChildren(h('p', { class: 'muted' }, 'The payment list is not available.'))
      showError(err)
    }
  }
  await loadRecent()
}

interface C2bAccount {
  account_number: string
  paybills: string[]
  simulator: boolean
}

/**
 * Customer payments (C2B): the tenant's tills and paybills, its account number on the platform's
 * paybills, and in simulator mode a form that plays a customer paying the till.
 */
async function customerPayments(root: HTMLElement): Promise<void> {
  let account: C2bAccount
  let own: string[]
  try {
    account = await api.get<C2bAccount>(scoped('/api/v1/payments/c2b/account'))
    own = (
      await api.get<{ data: Array<{ shortcode: string }> }>(
        scoped('/api/v1/payments/c2b/shortcodes'),
      )
    ).data.map((s) => s.shortcode)
  } catch {
    return
  }
  const panel = h(
    'section',
    { class: 'panel', id: 'c2b' },
    h('h2', {}, 'Customer payments (till and paybill)'),
    own.length || account.paybills.length
      ? null
      : h(
          'p',
          { class: 'empty' },
          'No till or paybill yet. Payments customers make to your till or paybill will appear here once it is registered',
          can('admin')
            ? [': ', h('a', { href: '#/settings' }, 'register it in Settings'), '.']
            : ' (an Admin registers it in Settings).',
        ),
    h(
      'p',
      {},
      own.length ? ['Your tills and paybills: ', h('code', {}, own.join(', ')), '. '] : null,
      account.paybills.length
        ? [
            'Customers paying the paybill ',
            h('code', {}, account.paybills.join(', ')),
            ' enter account number ',
            h('strong', { id: 'c2b-account-number' }, account.account_number),
            '.',
          ]
        : null,
    ),
  )
  const shortcodes = [...own, ...account.paybills]
  if (account.simulator && can('pay') && shortcodes.length) {
    const result = h('div', { role: 'status', id: 'c2b-simulate-status' })
    const form = h(
      'form',
      {
        class: 'stack',
        id: 'c2b-simulate-form',
        'aria-label': 'Simulate a customer paying the till',
      },
      h(
        'label',
        {},
        'Till or paybill',
        h('select', { name: 'shortcode' }, ...shortcodes.map((s) => h('option', { value: s }, s))),
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
        'Payer phone',
        h('input', { name: 'phone', required: true, placeholder: '07XXXXXXXX' }),
      ),
      h(
        'label',
        {},
        'Account (paybill)',
        h('input', {
          name: 'account',
          maxlength: 20,
          value: account.paybills.length && !own.length ? account.account_number : '',
        }),
      ),
      h('button', { type: 'submit' }, 'Simulate a customer paying the till'),
    ) as HTMLFormElement
    form.addEventListener('submit', async (e) => {
      e.preventDefault()
      const v = formValues(form)
      try {
        await api.send('POST', '/api/v1/payments/c2b/simulate', {
          shortcode: v.shortcode,
          amount: Number(v.amount),
          phone_number: v.phone,
          ...(v.account ? { account: v.account } : {}),
        })
        result.replaceChildren(
          h(
            'p',
            {},
            `${money(Number(v.amount))} paid to ${v.shortcode} from ${localPhone(v.phone)}: it appears under Transactions shortly.`,
          ),
        )
      } catch (err) {
        showError(err)
      }
    })
    panel.append(h('h3', {}, 'Simulate a customer paying the till'), form, result)
  }
  root.append(panel)
}
