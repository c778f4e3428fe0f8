import { localPhone } from '../format.ts'
import { h, money } from '../ui.ts'

/** A payment as `GET /api/v1/payments/status/{id}` and the payments list answer it. */
export interface PaymentStatus {
  checkout_request_id: string
  status: 'pending' | 'unknown' | 'success' | 'failed' | 'cancelled' | 'timeout'
  result_code: number | null
  result_desc: string | null
  /** What happened in the owner's words, from the platform's one result-code table. */
  result_message?: string | null
  mpesa_receipt_number: string | null
  amount: number
  phone_number: string
  account_reference: string
  created_at?: string
  updated_at: string
}

export const STATUS_WORDS: Record<string, string> = {
  pending: 'Waiting',
  unknown: 'Checking',
  success: 'Received',
  failed: 'Failed',
  cancelled: 'Cancelled',
  timeout: 'No answer',
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
  if (s.status === 'unknown')
    return h(
      'p',
      {},
      head('Checking'),
      ` ${money(s.amount)} from ${who}: ${s.result_message ?? ''}`,
    )
  // The platform says why, in the same words as the API and the webhook (one table).
  const why = s.result_message ?? 'M-PESA did not complete it. Check the number and send it again.'
  return h('p', {}, head('Not paid'), `: ${money(s.amount)} from ${who}. ${why}`)
}
