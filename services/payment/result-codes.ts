/** The final statuses (rows.ts `FinalStatus`, spelt out here: rows.ts reads this table). */
type FinalStatus = 'success' | 'failed' | 'cancelled' | 'timeout'

/**
 * What each documented Daraja STK result code means for the payment, in one table used by the
 * API (`result_message`), the `payment.failed` webhook and the dashboard. Codes and their causes
 * are Daraja's (M-Pesa Express docs, result codes); the sentences are written for a shop owner.
 * `retry`: the same request may succeed if sent again later (after `retryAfterS` when given).
 */
export interface ResultMeaning {
  status: FinalStatus
  message: string
  retry?: boolean
  retryAfterS?: number
}

export const STK_RESULTS: Readonly<Record<number, ResultMeaning>> = {
  0: { status: 'success', message: 'Paid.' },
  1: {
    status: 'failed',
    message: 'The customer does not have enough money on M-Pesa for this payment.',
  },
  2: { status: 'failed', message: "The amount is below M-Pesa's minimum of KES 1." },
  3: { status: 'failed', message: "The amount is above M-Pesa's maximum for one payment." },
  4: {
    status: 'failed',
    message:
      'The payment would take the customer past their daily M-Pesa limit; they can pay tomorrow.',
  },
  15: {
    status: 'failed',
    message:
      'M-Pesa refused this as a duplicate of a payment just made; check before asking again.',
  },
  17: {
    status: 'failed',
    message:
      'M-Pesa refused a second request for the same amount to the same customer within two minutes; wait two minutes, then ask again.',
    retry: true,
    retryAfterS: 120,
  },
  26: {
    status: 'failed',
    message: 'M-Pesa is busy right now; ask again in a few minutes.',
    retry: true,
    retryAfterS: 180,
  },
  1001: {
    status: 'failed',
    message:
      "Another M-Pesa prompt was already open on the customer's phone; ask again in a minute.",
    retry: true,
    retryAfterS: 60,
  },
  1019: {
    status: 'timeout',
    message: 'The prompt expired before the customer answered; ask again.',
    retry: true,
  },
  1025: {
    status: 'failed',
    message: 'M-Pesa could not send the prompt; ask again, with a shorter account reference.',
    retry: true,
  },
  1031: { status: 'cancelled', message: 'The customer cancelled the prompt on their phone.' },
  1032: { status: 'cancelled', message: 'The customer cancelled the prompt on their phone.' },
  1037: {
    status: 'timeout',
    message:
      "The customer's phone could not be reached (switched off, out of network or busy); ask again later.",
    retry: true,
  },
  2001: {
    status: 'failed',
    message: 'The customer entered a wrong M-Pesa PIN; ask again.',
    retry: true,
  },
  2028: {
    status: 'failed',
    message:
      'M-Pesa refused: the business number is not set up for this kind of payment (the operator must check the shortcode and till settings).',
  },
  9999: {
    status: 'failed',
    message: 'M-Pesa could not complete the payment because of an error on its side; ask again.',
    retry: true,
  },
}

/** The meaning of a result code; an undocumented non-zero code is a failure in plain words. */
export function meaningOf(code: number | null, desc?: string | null): ResultMeaning {
  if (code === null)
    return {
      status: 'failed',
      message: desc ? `The payment failed: ${desc}` : 'The payment failed.',
    }
  return (
    STK_RESULTS[code] ?? {
      status: 'failed',
      message: `M-Pesa refused the payment (code ${code}${desc ? `: ${desc}` : ''}).`,
    }
  )
}

/** The owner-facing sentence for a payment's state; null while it is still open. */
export function resultMessage(p: {
  status: string
  resultCode: number | null
  resultDesc: string | null
}): string | null {
  if (p.status === 'pending' || p.status === 'initiating') return null
  if (p.status === 'unknown')
    return 'M-Pesa has not told us how this payment ended yet; it is being checked.'
  if (p.resultCode === null && p.status === 'failed')
    return p.resultDesc ? `The payment failed: ${p.resultDesc}` : 'The payment failed.'
  return meaningOf(p.resultCode, p.resultDesc).message
}
