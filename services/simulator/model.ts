// What the simulator records and decides, shared by its routes, store and callbacks.

/** What M-Pesa decided of a request, and whether its callback is sent. */
export interface Outcome {
  /** Daraja's ResultCode: a number, or a string code such as a reversal's 'R000002'. */
  resultCode: number | string
  resultDesc: string
  /** false: the callback is never sent. */
  callback: boolean
}

/** Result descriptions as Daraja sends them (M-Pesa Express result codes). */
export const descriptions: Record<number, string> = {
  0: 'The service request is processed successfully.',
  1: 'The balance is insufficient for the transaction.',
  2: 'Declined due to limit rule: less than the minimum transaction amount.',
  3: 'Declined due to limit rule: greater than the maximum transaction amount.',
  4: 'Declined due to limit rule: would exceed daily transfer limit.',
  15: 'Duplicate detected.',
  17: 'Rule limited.',
  26: 'System busy. The service request is rejected.',
  1001: 'Unable to lock subscriber, a transaction is already in process for the current subscriber',
  1019: 'Transaction has expired.',
  1025: 'An error occurred while sending a push request.',
  1031: 'Request cancelled by user',
  1032: 'Request cancelled by user',
  1037: 'DS timeout user cannot be reached',
  2001: 'The initiator information is invalid.',
  2028: 'The request is not permitted according to product assignment.',
  9999: 'An error occurred while sending a push request.',
}

/**
 * The STK result a test phone number asks for, by its last four digits (docs/daraja.md): the
 * result code itself where it has four digits (1001, 1019, 1025, 1031, 1032, 1037, 2001, 2028),
 * 00NN for the short ones (0001, 0004, 0015, 0017, 0026), 9998 for 9999; 9999 is a success whose
 * callback is never sent. Anything else succeeds.
 */
const PHONE_CODES: Record<string, number> = {
  '0001': 1,
  '0004': 4,
  '0015': 15,
  '0017': 17,
  '0026': 26,
  '1001': 1001,
  '1019': 1019,
  '1025': 1025,
  '1031': 1031,
  '1032': 1032,
  '1037': 1037,
  '2001': 2001,
  '2028': 2028,
  '9998': 9999,
}

export function outcomeForPhone(phone: string): Outcome {
  const last4 = phone.slice(-4)
  const code = PHONE_CODES[last4] ?? 0
  return { resultCode: code, resultDesc: descriptions[code]!, callback: last4 !== '9999' }
}

/** A documented result code as an outcome (amount limits, product assignment). */
export const outcomeOfCode = (code: number): Outcome => ({
  resultCode: code,
  resultDesc: descriptions[code]!,
  callback: true,
})

export function b2cOutcome(phone: string): Outcome {
  const last4 = phone.slice(-4)
  const code = last4 === '0001' ? 1 : last4 === '2001' ? 2001 : 0
  return { resultCode: code, resultDesc: descriptions[code]!, callback: last4 !== '9999' }
}

/** Where a remembered request's callback stands: when it is decided, what its URL answered. */
interface CallbackState {
  decideAt: number
  callbackStatus: number | null
  callbackError: string | null
}

/** A request M-Pesa decides later, with the outcome and receipt chosen when it was accepted. */
interface DecidedRequest extends CallbackState {
  request: Record<string, unknown>
  outcome: Outcome
  receipt: string
}

/** A request Daraja names by its ConversationID and the caller's OriginatorConversationID. */
interface ConversationRequest extends DecidedRequest {
  conversationId: string
  originatorConversationId: string
}

export interface StkRecord extends DecidedRequest {
  kind: 'stk'
  checkoutRequestId: string
  merchantRequestId: string
}

export interface B2cRecord extends ConversationRequest {
  kind: 'b2c'
}

/** A customer paying a till or paybill (C2B simulate), and where its callbacks go. */
export interface C2bRecord extends CallbackState {
  kind: 'c2b'
  transId: string
  request: Record<string, unknown>
  /** The URLs registered for the shortcode when the customer paid. */
  validationUrl: string | null
  confirmationUrl: string | null
  responseType: 'Completed' | 'Cancelled'
  /** What the validation URL answered ('unreachable' when it did not). */
  validation: string | null
  /** The ThirdPartyTransID the validation URL answered with, echoed in the confirmation. */
  thirdPartyTransId?: string
  confirmed: boolean
}

/** A Transaction Status, Account Balance or Reversal request, answered later by its ResultURL. */
export interface AsyncRecord extends ConversationRequest {
  kind: 'status' | 'balance' | 'reversal'
}

export type AnyRecord = StkRecord | B2cRecord | C2bRecord | AsyncRecord

export const darajaError = (status: number, errorCode: string, errorMessage: string) =>
  new Response(JSON.stringify({ requestId: requestId(), errorCode, errorMessage }), {
    status,
    headers: { 'content-type': 'application/json' },
  })

/** Daraja's timestamp: YYYYMMDDHHmmss in East Africa Time. */
export function eatTimestamp(at: number): string {
  const d = new Date(at + 3 * 3600_000)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`
}

/** A ConversationID as Daraja gives one: `AG_<date>_<20 hex>`. */
export const newConversationId = (): string =>
  `AG_${eatTimestamp(Date.now()).slice(0, 8)}_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}`

let counter = 0
export const requestId = (): string =>
  `${Math.floor(Math.random() * 90000) + 10000}-${Date.now() % 1e8}-${++counter}`

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const RECEIPT_CHARS = `${LETTERS}0123456789`
/** Like a real M-Pesa receipt: 10 uppercase letters and digits, the first a letter. */
export function receiptNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10))
  let out = LETTERS[bytes[0]! % LETTERS.length]!
  for (const b of bytes.subarray(1)) out += RECEIPT_CHARS[b % RECEIPT_CHARS.length]
  return out
}

export const PHONE = /^254[17]\d{8}$/
export const MAX_RECORDS = 50_000
