import { parseAmountText } from '../kernel/money.ts'
import { timeZone as zoneOf } from '../kernel/time-zone.ts'
import type { ParsedTransaction } from './parsed.ts'
import {
  balanceOf,
  COST,
  cut,
  DATE,
  MAX_LENGTH,
  NOT_MONEY,
  NOTICES,
  nameAndPhone,
  RECEIPT,
} from './sms-text.ts'
import { amt, type Reading, type SmsKind, WORDINGS } from './sms-wordings.ts'

export type { SmsKind } from './sms-wordings.ts'

/**
 * `kind` is the wording the message used (kept for callers); the ledger's kind is on the
 * transaction. `charge` is the transaction cost or Fuliza access fee the message states, in cents,
 * only when above zero: the store keeps it as the 'charge' leg of the same receipt.
 */
export type SmsResult =
  | { ok: true; kind: SmsKind; transaction: ParsedTransaction; charge?: number }
  | { ok: false; skipped: boolean; message: string }

type When = { at: string } | { refused: string }

/** The message's own date, checked against the sanity window of DESIGN §16. */
function timeOf(text: string, timeZone: string, now: string): When | null {
  const m = DATE.exec(text)
  if (!m) return null
  const shown = `${m[1]}/${m[2]}/${m[3]}`
  let year = +m[3]!
  if (year < 100) year += 2000
  let hour = +m[4]!
  const half = m[6]?.toUpperCase()
  if (half === 'P' && hour < 12) hour += 12
  if (half === 'A' && hour === 12) hour = 0
  const at = zoneOf(timeZone).localToUtc({ year, month: +m[2]!, day: +m[1]!, hour, minute: +m[5]! })
  if (!at) return { refused: `the date ${shown} is not a real date` }
  if (year < 2007) return { refused: `the date ${shown} is before M-Pesa began (2007)` }
  if (Date.parse(at) > Date.parse(now) + 86_400_000)
    return { refused: `the date ${shown} is more than a day in the future` }
  return { at }
}

const refuse = (message: string): SmsResult => ({ ok: false, skipped: false, message })
const skip = (message: string): SmsResult => ({ ok: false, skipped: true, message })

/**
 * Reads one M-Pesa SMS: personal, Till, Pochi la Biashara and pay bill owner confirmations,
 * Fuliza, M-Shwari, KCB M-PESA, airtime and bundles, reversals. Dates are day first (`5/1/24` is
 * 5 January); a wording that carries no date (Fuliza notices, bare reversals) takes `now`. Notices
 * that move no money are skipped; a confirmation that cannot be read is refused with the part that
 * is missing. Never throws.
 */
export function parseSms(raw: string, timeZone: string, now: string): SmsResult {
  if (raw.length > MAX_LENGTH) return refuse('too long to be one M-Pesa message')
  const text = raw.replace(/\s+/g, ' ').trim()
  for (const [re, reason] of NOT_MONEY) if (re.test(text)) return skip(reason)

  const receipt = RECEIPT.exec(text)
  let found: Reading | null = null
  for (const w of WORDINGS) {
    const m = w.re.exec(text)
    if (!m) continue
    found = { ...w.read(m), amount: amountIn(text, m) }
    break
  }
  if (!found) for (const [re, reason] of NOTICES) if (re.test(text)) return skip(reason)
  if (!receipt || !/\d/.test(receipt[1]!)) {
    if (found || (/confirmed/i.test(text) && amt('').test(text)))
      return refuse('the receipt number is missing: the message may be cut short')
    if (/m-?pesa|fuliza|m-?shwari|safaricom|pochi|ziidi|lipa\s*na/i.test(text))
      return skip('an M-Pesa notice without a receipt number moves no money')
    return refuse('not an M-Pesa confirmation: no receipt number')
  }
  if (!found) {
    if (!amt('').test(text)) return refuse('the amount is missing: the message may be cut short')
    if (amt('', '$').test(text))
      return refuse(
        'the message ends inside its amount: it was cut short before saying how the money moved',
      )
    return refuse(
      'not a recognised M-Pesa confirmation: no wording this reader knows says how the money moved',
    )
  }
  return readingToResult({
    r: found,
    text,
    receiptNumber: receipt[1]!.toUpperCase(),
    timeZone,
    now,
  })
}

/** The first amount inside a wording's match. */
function amountIn(text: string, m: RegExpExecArray): Reading['amount'] {
  const a = amt('').exec(m[0])
  if (!a) return null
  return { digits: a[1]!, atEnd: m.index + a.index + a[0].length >= text.length }
}

function readingToResult({
  r,
  text,
  receiptNumber,
  timeZone,
  now,
}: {
  r: Reading
  text: string
  receiptNumber: string
  timeZone: string
  now: string
}): SmsResult {
  const isReversal = r.wording === 'reversal'
  let amount: number | null = null
  let direction = r.direction
  if (isReversal) {
    // Only "Ksh… is credited / debited" is the reversed amount; a bare notice leaves it to the store.
    const moved = amt('', String.raw`\s*(?:is|has\s*been)\s*(credited|debited|returned)`).exec(text)
    if (moved) {
      amount = parseAmountText(moved[1])
      if (moved[2]!.toLowerCase() === 'debited') direction = 'out'
    } else if (!r.reversalOf) {
      return refuse('the reversal names neither the reversed receipt nor the amount')
    }
  } else {
    if (!r.amount) return refuse('the amount is missing: the message may be cut short')
    if (r.amount.atEnd) return refuse('the amount may be cut short: the message ends inside it')
    amount = parseAmountText(r.amount.digits)
    if (!amount || amount <= 0) return refuse('the amount is not valid')
  }
  let occurredAt = now
  if (r.dated !== false) {
    const when = timeOf(text, timeZone, now)
    if (when && 'refused' in when) return refuse(when.refused)
    if (when) occurredAt = when.at
  }
  const party = r.party === undefined ? null : cut(r.party) || null
  const { name, phone } =
    party && ['received', 'sent'].includes(r.wording)
      ? nameAndPhone(party)
      : { name: party, phone: null }
  const description = r.named ? `${r.description} ${name ?? phone ?? 'unknown'}` : r.description
  const transaction: ParsedTransaction = {
    occurredAt,
    amount,
    direction,
    counterpartyName: name,
    counterpartyPhone: phone ?? null,
    description,
    receiptNumber,
    balance: r.wording === 'fuliza' ? null : balanceOf(text),
    kind: r.kind,
    ...(r.reversalOf ? { reversalOf: r.reversalOf } : {}),
  }
  const cost = COST.exec(text)
  const charge = cost ? parseAmountText(cost[1]) : null
  return { ok: true, kind: r.wording, transaction, ...(charge ? { charge } : {}) }
}
