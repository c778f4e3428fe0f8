/** What the simulator records and decides, shared by its routes, store and callbacks. */
export interface SimulatorOptions {
  delayMs: number
  version: string
  consumerKey?: string
  consumerSecret?: string
  shortcode?: string
  passkey?: string
  /**
   * A file that keeps the requests across restarts (like Daraja, which remembers them), so the
   * STK query still answers for requests made before a crash. In memory only when unset.
   */
  statePath?: string
  /** Overrides the outcome (for tests); default by phone number. */
  outcomeOf?: (phone: string) => Outcome
}

export interface Outcome {
  resultCode: number
  resultDesc: string
  /** false: the callback is never sent. */
  callback: boolean
}

const descriptions: Record<number, string> = {
  0: 'The service request is processed successfully.',
  1: 'The balance is insufficient for the transaction.',
  1032: 'Request cancelled by user',
  1037: 'DS timeout user cannot be reached',
  2001: 'The initiator information is invalid.',
}

export function outcomeForPhone(phone: string): Outcome {
  const last4 = phone.slice(-4)
  const code =
    last4 === '1032'
      ? 1032
      : last4 === '1037'
        ? 1037
        : last4 === '0001'
          ? 1
          : last4 === '2001'
            ? 2001
            : 0
  return { resultCode: code, resultDesc: descriptions[code]!, callback: last4 !== '9999' }
}

export function b2cOutcome(phone: string): Outcome {
  const last4 = phone.slice(-4)
  const code = last4 === '0001' ? 1 : last4 === '2001' ? 2001 : 0
  return { resultCode: code, resultDesc: descriptions[code]!, callback: last4 !== '9999' }
}

export interface StkRecord {
  kind: 'stk'
  checkoutRequestId: string
  merchantRequestId: string
  request: Record<string, unknown>
  outcome: Outcome
  receipt: string
  decideAt: number
  callbackStatus: number | null
  callbackError: string | null
}

export interface B2cRecord {
  kind: 'b2c'
  conversationId: string
  originatorConversationId: string
  request: Record<string, unknown>
  outcome: Outcome
  receipt: string
  decideAt: number
  callbackStatus: number | null
  callbackError: string | null
}

export const darajaError = (status: number, errorCode: string, errorMessage: string) =>
  new Response(JSON.stringify({ requestId: requestId(), errorCode, errorMessage }), {
    status,
    headers: { 'content-type': 'application/json' },
  })

let counter = 0
export const requestId = (): string =>
  `${Math.floor(Math.random() * 90000) + 10000}-${Date.now() % 1e8}-${++counter}`

const RECEIPT_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
export function receiptNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10))
  let out = ''
  for (const b of bytes) out += RECEIPT_CHARS[b % RECEIPT_CHARS.length]
  return out
}

export const PHONE = /^254[17]\d{8}$/
export const MAX_RECORDS = 50_000
