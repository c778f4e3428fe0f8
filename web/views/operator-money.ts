import { api } from '../api.ts'
import { date, h, num, section, showError, table } from '../ui.ts'

/**
 * The operator's "Money and Daraja" panel: the open alerts about money (GET
 * /api/v1/payments/alerts) in plain words, what happened and what to do, and a "Check Daraja"
 * button that runs the go-live check of the configured Daraja (POST /api/v1/payments/daraja/check,
 * the same as `mmp doctor --daraja`) and shows each of its lines.
 */
type AlertName = 'provider_credentials' | 'provider_setup' | 'payments_unknown'

interface Alert {
  name: AlertName
  detail: string
  count: number
  first_at: string
  last_at: string
}
interface Alerts {
  alerts: Alert[]
  unanswered_over_1h: number
  oldest_unanswered_at: string | null
}
interface CheckLine {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}
interface CheckReport {
  status: CheckLine['status']
  provider_url: string
  live: boolean
  checked_at: string
  checks: CheckLine[]
}

/** Each alert in the operator's words: what happened, then what to do. */
const ALERT_WORDS: Record<AlertName, { title: string; happened: string; todo: string }> = {
  provider_credentials: {
    title: 'M-Pesa refuses the platform’s settings',
    happened:
      'M-Pesa refused mmp’s own keys, business number or passkey, so every payment fails at once (nothing is charged).',
    todo: 'Correct the M-Pesa settings (consumer key and secret, shortcode, passkey) and restart mmp, then press Check Daraja. The alert clears with the next payment M-Pesa accepts.',
  },
  provider_setup: {
    title: 'The business number is not set up for a payment type',
    happened:
      'M-Pesa took a payment but refused it because the shortcode is not set up for that kind of payment (result 2028).',
    todo: 'Ask Safaricom to enable M-Pesa Express (or the product used) for the shortcode. The alert clears with the next payment that succeeds.',
  },
  payments_unknown: {
    title: 'Payments with no answer for over an hour',
    happened:
      'Some payments have had no answer from M-Pesa for over an hour: their customers may have paid.',
    todo: 'Run `mmp payments reconcile`. If Check Daraja warns about Pull Transactions, register the shortcode for it (see docs/daraja.md). The alert clears once none is left.',
  },
}

const CHECK_WORDS: Record<CheckLine['status'], { text: string; cls: string | null }> = {
  ok: { text: 'OK', cls: 'status-success' },
  warn: { text: 'Warning', cls: null },
  fail: { text: 'Failed', cls: 'status-failed' },
}

function alertItem(a: Alert): HTMLElement {
  const words = ALERT_WORDS[a.name] ?? { title: a.name, happened: a.detail, todo: '' }
  return h(
    'li',
    { 'data-alert': a.name },
    h('strong', {}, words.title),
    h('p', {}, words.happened),
    h('p', {}, h('strong', {}, 'What to do: '), words.todo),
    h(
      'p',
      { class: 'muted' },
      `${a.detail} · since ${date(a.first_at)}, last ${date(a.last_at)}, ${num(a.count)} time${a.count === 1 ? '' : 's'}`,
    ),
  )
}

function alertList(res: Alerts): HTMLElement {
  if (res.alerts.length === 0)
    return h(
      'p',
      { id: 'money-alerts' },
      res.unanswered_over_1h
        ? `No alert raised yet; ${num(res.unanswered_over_1h)} payments have had no answer for over an hour.`
        : 'No alerts about money: M-Pesa accepts the platform’s settings and no payment is waiting on it.',
    )
  return h('ul', { id: 'money-alerts', class: 'insights' }, res.alerts.map(alertItem))
}

function checkReport(r: CheckReport): HTMLElement {
  const summary =
    r.status === 'ok'
      ? 'Every check passed.'
      : r.status === 'fail'
        ? 'M-Pesa will refuse payments until the failed lines are fixed.'
        : 'Payments work, with the warnings below.'
  return h(
    'div',
    { id: 'daraja-check', 'data-check-status': r.status },
    h(
      'p',
      {},
      `${r.live ? 'Daraja' : 'The simulator'} at ${r.provider_url}, checked ${date(r.checked_at)}. ${summary}`,
    ),
    table(
      ['Check', 'Result', 'What was found', 'What to do'],
      r.checks.map((c) => [
        c.name,
        h('strong', { class: CHECK_WORDS[c.status].cls }, CHECK_WORDS[c.status].text),
        c.detail,
        c.fix ?? '—',
      ]),
      { 'aria-label': 'Daraja go-live check' },
    ),
  )
}

export function moneyPanel(): HTMLElement {
  const alerts = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading alerts…'))
  const result = h('div', { role: 'status' })
  const button = h(
    'button',
    { type: 'button', id: 'check-daraja' },
    'Check Daraja',
  ) as HTMLButtonElement
  button.addEventListener('click', async () => {
    button.disabled = true
    result.replaceChildren(h('p', { class: 'muted' }, 'Calling Daraja…'))
    try {
      result.replaceChildren(
        checkReport(await api.send<CheckReport>('POST', '/api/v1/payments/daraja/check')),
      )
    } catch (err) {
      result.replaceChildren()
      showError(err)
    } finally {
      button.disabled = false
    }
  })
  api.get<Alerts>('/api/v1/payments/alerts').then(
    (res) => alerts.replaceChildren(alertList(res)),
    (err) => {
      alerts.replaceChildren(h('p', { class: 'muted' }, 'The alerts could not be read.'))
      showError(err)
    },
  )
  return section(
    'Money and Daraja',
    alerts,
    h(
      'p',
      { class: 'muted' },
      'Check Daraja calls the configured M-Pesa with the platform’s keys, shortcode and passkey (nothing is charged, nobody is prompted) and says what is wrong, one line each.',
    ),
    button,
    result,
  )
}
