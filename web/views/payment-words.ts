import { localPhone } from '../format.ts'
import { h, money } from '../ui.ts'

/** A payment as `GET /api/v1/payments/status/{id}` and the payments list answer it. */
export interface PaymentStatus {
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

export const STATUS_WORDS: Record<string, string> = {
  pending: 'Waiting',
  success: 'Received',
  failed: 'Failed',
  cancelled: 'Cancelled',
  timeout: 'No answer',
}

/** Why a prompt did not end in a payment, by its M-PESA result code, and what to do. */
const FAILURES: Record<number, string> = {
  1: 'the customer’s M-PESA balance is too low. Ask them to top up (or use Fuliza) and send it again.',
  2001: 'the customer entered a wrong PIN. Send it again and ask them to enter it carefully.',
  1032: 'the customer cancelled the prompt on their phone. Check with them and send it again.',
  1037: 'the customer’s phone could not be reached, or they did not answer in time. Check it is on and send it again.',
}

/** A payment's state in the owner's words: `KES 150.00 received from 0712 345 678, receipt …`. */
export function paymentResult(s: PaymentStatus): HTMLElement {
  const who = localPhone(s.phone_number)
  const head = (text: string) =>
    h('strong', { class: `status-${s.status}`, 'data-status': s.status }, text)
  if (s.status === 'success')
    return h(
      'p',
      {},
      head(`${money(s.amount)} received`),
      ` from ${who}`,
      s.mpesa_receipt_number ? [', receipt ', h('code', {}, s.mpesa_receipt_number)] : '',
      '.',
    )
  if (s.status === 'pending')
    return h(
      'p',
      {},
      head('Waiting'),
      ` for ${who} to enter their M-PESA PIN for ${money(s.amount)}…`,
    )
  const why =
    (s.result_code !== null && FAILURES[s.result_code]) ||
    (s.status === 'cancelled'
      ? FAILURES[1032]!
      : s.status === 'timeout'
        ? FAILURES[1037]!
        : 'M-PESA did not complete it. Check the number and send it again.')
  return h('p', {}, head('Not paid'), `: ${money(s.amount)} from ${who}, because ${why}`)
}
