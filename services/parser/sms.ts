import type { Kind } from '../../schema/vocabulary.ts'
import { parseAmountText } from '../kernel/money.ts'
import { localToUtc } from './local-time.ts'
import { type ParsedTransaction, splitNamePhone } from './parsed.ts'

/**
 * `kind` is the wording the message used (kept for callers); the ledger's kind is on the
 * transaction. `charge` is the transaction cost or Fuliza access fee the message states, in cents,
 * only when above zero: the store keeps it as the 'charge' leg of the same receipt.
 */
export type SmsResult =
  | { ok: true; kind: SmsKind; transaction: ParsedTransaction; charge?: number }
  | { ok: false; skipped: boolean; message: string }

export type SmsKind =
  | 'received'
  | 'deposit'
  | 'sent'
  | 'paybill'
  | 'bundles'
  | 'buy_goods'
  | 'withdraw'
  | 'airtime'
  | 'reversal'
  | 'fuliza'
  | 'fuliza_repayment'
  | 'to_savings'
  | 'from_savings'
  | 'mshwari_loan'
  | 'loan_repayment'
  | 'business_transfer'

type Direction = 'in' | 'out'
interface Reading {
  wording: SmsKind
  kind: Kind
  direction: Direction
  /** The amount's digits, and whether the message ends right after them (cut short?). */
  amount: { digits: string; atEnd: boolean } | null
  party?: string
  /** The description; when `named`, the counterparty's name is added after it. */
  description: string
  named?: boolean
  reversalOf?: string
  /** false for wordings that never carry a date (Fuliza notices, bare reversals): `now` is used. */
  dated?: boolean
}

// Every gap is \s*: real messages run words together ("Confirmed.on", "PMKsh20.00", "PM.New").
const KSH = String.raw`(?:Kshs?|KES)\.?\s*`
const NUM = String.raw`(\d[\d,]*(?:\.\d{1,2})?)`
const AMT = KSH + NUM
const amt = (before: string, after = '') => new RegExp(before + AMT + after, 'i')
const REST = String.raw`\s*(.*)`
const SAVINGS = String.raw`(M-?Shwari(?:\s*Lock\s*Savings)?|KCB\s*M-?PESA|Lock\s*Savings|Ziidi)`
const MAX_LENGTH = 1000

const RECEIPT = /(?:^|[^A-Z0-9])([A-Z0-9]{8,12})\s*[.,]?\s*Confirmed/i
const DATE =
  /(\d{1,2})\/(\d{1,2})\/(\d{2,4})\s*(?:at\s*)?(\d{1,2}):(\d{2})(?::\d{2})?\s*(?:([AP])\.?M)?/i
const COST = new RegExp(
  String.raw`(?:Transaction\s*cost|(?:Access\s*Fee|Interest)\s*charged)[,.:]?\s*(?:${KSH})?${NUM}`,
  'i',
)
const BALANCE = new RegExp(
  String.raw`balance\s*(?:is|was)?\s*(?:now)?\s*:?\s*(?:${KSH})?${NUM}`,
  'gi',
)
// The party ends where the date, the balance or the account number begins, or where the text ends.
const PARTY_END =
  /\s*(?:\bon\s*\d{1,2}\/\d|\.?\s*New\s*(?:M-?PESA|business|Account|Utility|balance)|\.\s*(?:Transaction\s*cost|M-?PESA\s*balance)|\s*for\s*account\b)/i

/** Notices that look like confirmations but report no movement: skipped before any reading. */
const NOT_MONEY: Array<[RegExp, string]> = [
  [/^(?![\s\S]*confirmed)[\s\S]*\bfailed\b/i, 'a failed transaction notice moves no money'],
  [
    /^(?![\s\S]*reversed)[\s\S]*(?:balance\s*was\s*:|your\s*account\s*balance\s*was\b)/i,
    'a balance enquiry moves no money',
  ],
]

/** Other notices, skipped when no money wording was found (a limit may close a repayment). */
const NOTICES: Array<[RegExp, string]> = [
  [/Fuliza\s*M-?PESA\s*limit\s*is/i, 'a Fuliza limit notice moves no money'],
  [/opted\s*(?:in|out)/i, 'a Fuliza opt-in or opt-out notice moves no money'],
  [
    /loan\s*limit\s*is|loan\s*request\s*will\s*be\s*processed/i,
    'a loan limit notice moves no money',
  ],
  [/mini\s*statement/i, 'a mini statement repeats transactions already reported'],
  [
    /verification\s*code|one[-\s]*time\s*(?:pin|password|code)|\bOTP\b/i,
    'a one-time code moves no money',
  ],
  [
    /Fuliza\s*M-?PESA\s*outstanding\s*amount\s*is/i,
    'a Fuliza outstanding-amount notice moves no money',
  ],
]

const isBundles = (payee: string) => /\bbundles?\b|\bdata\s*(?:plan|offer)|tunukiwa/i.test(payee)
const isLoanParty = (party: string) =>
  /\b(hustler\s*fund|fuliza|m-?shwari\s*loan|kcb\s*m-?pesa\s*loan|tala|zenka|okash)\b/i.test(party)
const savingsName = (raw: string) =>
  /kcb/i.test(raw)
    ? 'KCB M-PESA'
    : /lock/i.test(raw)
      ? 'M-Shwari Lock Savings'
      : /ziidi/i.test(raw)
        ? 'Ziidi'
        : 'M-Shwari'

/** Wordings, narrowest first: Fuliza and savings messages also say "sent", "from" or "paid". */
const WORDINGS: Array<{ re: RegExp; read: (m: RegExpExecArray) => Omit<Reading, 'amount'> }> = [
  {
    // "Transaction X has been reversed", "Reversal of transaction X has been successfully reversed
    // ... and Ksh200.00 is credited to your M-PESA account".
    // Without a receipt ("… has been reversed") the amount alone tells what came back.
    re: /Transaction\s*([A-Z0-9]{8,12})\s*has\s*been\s*reversed|Reversal\s*of\s*transaction\s*([A-Z0-9]{8,12})|Your\s*(?:original\s*)?transaction\s*([A-Z0-9]{8,12})\s[\s\S]*?reversed|has\s*been\s*(?:successfully\s*)?reversed/i,
    read: (m) => {
      const original = (m[1] ?? m[2] ?? m[3])?.toUpperCase()
      return {
        wording: 'reversal',
        kind: 'reversal',
        direction: 'in',
        description: original ? `Reversal of transaction ${original}` : 'Reversal',
        ...(original ? { reversalOf: original } : {}),
      }
    },
  },
  {
    re: amt(String.raw`Fuliza\s*M-?PESA\s*amount\s*is\s*`),
    read: () => ({
      wording: 'fuliza',
      kind: 'loan_drawn',
      direction: 'in',
      party: 'Fuliza M-PESA',
      description: 'Fuliza M-PESA overdraft',
      dated: false,
    }),
  },
  {
    re: amt(
      '',
      String.raw`\s*from\s*your\s*M-?PESA\s*has\s*been\s*used\s*to\s*(fully|partially)\s*pay`,
    ),
    read: (m) => ({
      wording: 'fuliza_repayment',
      kind: 'loan_repaid',
      direction: 'out',
      party: 'Fuliza M-PESA',
      description: `Fuliza M-PESA repayment${/full/i.test(m[2]!) ? ' in full' : ' in part'}`,
    }),
  },
  {
    re: amt(String.raw`M-?Shwari\s*loan\s*has\s*been\s*approved[\s\S]*?\band\s*`),
    read: () => ({
      wording: 'mshwari_loan',
      kind: 'loan_drawn',
      direction: 'in',
      party: 'M-Shwari',
      description: 'M-Shwari loan',
    }),
  },
  {
    re: amt(
      String.raw`(?:Loan\s*of|loan\s*repayment\s*of)\s*`,
      String.raw`\s*(?:has\s*been\s*)?(?:repaid|from\s*your\s*M-?PESA)`,
    ),
    read: () => ({
      wording: 'loan_repayment',
      kind: 'loan_repaid',
      direction: 'out',
      party: 'M-Shwari',
      description: 'Loan repayment',
    }),
  },
  {
    re: amt('', String.raw`\s*transferr?ed\s*to\s*(?:your\s*)?${SAVINGS}`),
    read: (m) => {
      const name = savingsName(m[2]!)
      return {
        wording: 'to_savings',
        kind: 'savings_out',
        direction: 'out',
        party: name,
        description: `Transfer to ${name}`,
      }
    },
  },
  {
    re: new RegExp(
      String.raw`(?:${AMT}\s*transferr?ed|transferr?ed\s*${AMT})\s*from\s*(?:your\s*)?${SAVINGS}`,
      'i',
    ),
    read: (m) => {
      const name = savingsName(m[3]!)
      return {
        wording: 'from_savings',
        kind: 'savings_in',
        direction: 'in',
        party: name,
        description: `Transfer from ${name}`,
      }
    },
  },
  {
    re: amt('', String.raw`\s*has\s*been\s*moved\s*from\s*your\s*(M-?PESA|business)\s*account`),
    read: (m) => {
      const toBusiness = /pesa/i.test(m[2]!)
      return {
        wording: 'business_transfer',
        kind: 'own_transfer',
        direction: toBusiness ? 'in' : 'out',
        party: toBusiness ? 'M-PESA account' : 'Business account',
        description: toBusiness
          ? 'Moved from M-PESA to business account'
          : 'Moved from business account to M-PESA',
      }
    },
  },
  {
    re: amt(String.raw`Give\s*`, String.raw`\s*cash\s*to${REST}`),
    read: (m) => ({
      wording: 'deposit',
      kind: 'cash_deposit',
      direction: 'in',
      party: m[2],
      description: 'Deposit of funds at agent',
      named: true,
    }),
  },
  {
    re: amt(String.raw`Withdraw\s*`, String.raw`\s*from${REST}`),
    read: (m) => ({
      wording: 'withdraw',
      kind: 'cash_withdrawal',
      direction: 'out',
      party: m[2]!.replace(/^\d+\s*-\s*/, ''),
      description: 'Withdrawal at agent',
      named: true,
    }),
  },
  {
    re: amt(String.raw`bought\s*`, String.raw`\s*of\s*airtime(?:\s*for\s*(\+?\d{9,13}))?`),
    read: (m) => ({
      wording: 'airtime',
      kind: 'airtime',
      direction: 'out',
      party: 'Safaricom',
      description: m[2] ? `Airtime purchase for ${m[2]}` : 'Airtime purchase',
    }),
  },
  {
    re: amt('', String.raw`\s*sent\s*to\s*(.*?)\s*for\s*account\s*(.*)`),
    read: (m) => {
      const account = cut(m[3]!)
      const bundles = isBundles(m[2]!)
      return {
        wording: bundles ? 'bundles' : 'paybill',
        kind: bundles ? 'airtime' : isLoanParty(m[2]!) ? 'loan_repaid' : 'supplier_payment',
        direction: 'out',
        party: m[2],
        description: `Pay Bill to ${m[2]!.trim()}${account ? ` Acc. ${account}` : ''}`,
      }
    },
  },
  {
    re: new RegExp(String.raw`(?:${AMT}\s*sent\s*to|You\s*have\s*sent\s*${AMT}\s*to)${REST}`, 'i'),
    read: (m) => ({
      wording: 'sent',
      kind: isLoanParty(m[3]!) ? 'loan_repaid' : 'supplier_payment',
      direction: 'out',
      party: m[3],
      description: 'Sent to',
      named: true,
    }),
  },
  {
    re: amt('', String.raw`\s*paid\s*to${REST}`),
    read: (m) => ({
      wording: 'buy_goods',
      kind: 'supplier_payment',
      direction: 'out',
      party: m[2],
      description: 'Buy Goods at',
      named: true,
    }),
  },
  {
    // Personal "You have received Ksh… from", and the Till, Pochi and pay bill owner's
    // "Ksh… received from …. New Account / business / Utility balance is …".
    re: new RegExp(String.raw`(?:received\s*${AMT}\s*from|${AMT}\s*received\s*from)${REST}`, 'i'),
    read: (m) => ({
      wording: 'received',
      kind: isLoanParty(m[3]!) ? 'loan_drawn' : 'customer_payment',
      direction: 'in',
      party: m[3],
      description: 'Received from',
      named: true,
    }),
  },
]

/** The party's words up to the date, the balance or the account number. */
function cut(rest: string): string {
  const end = PARTY_END.exec(rest)
  return (end ? rest.slice(0, end.index) : rest).replace(/[\s.,]+$/, '').trim()
}

/** A name and phone from "0712345678 JOHN DOE", "JOHN DOE 2547***456" or "SHOP NAME". */
function nameAndPhone(party: string): { name: string | null; phone: string | null } {
  const masked = /^(\+?\d[\d*]{5,12})\s+(.+)$|^(.+?)\s+(\+?\d[\d*]{5,12})$/.exec(party)
  if (masked && (masked[1] ?? masked[4])!.includes('*'))
    return { name: (masked[2] ?? masked[3])!.trim(), phone: null }
  return splitNamePhone(party)
}

/** The wallet's own balance: not M-Shwari's, KCB's, a savings account's or Fuliza's. */
function balanceOf(text: string): number | null {
  for (const m of text.matchAll(BALANCE)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index)
    // The words since the last full stop or comma that is not inside a figure ("Ksh10.29 .M-PESA").
    const clause = before.split(/[.,](?!\d)/).pop()!
    if (/M-?Shwari|KCB|Saving|Fuliza|Lock|Ziidi/i.test(clause)) continue
    return parseAmountText(m[1])
  }
  return null
}

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
  const at = localToUtc(timeZone, year, +m[2]!, +m[1]!, hour, +m[5]!)
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
  return readingToResult(found, text, receipt[1]!.toUpperCase(), timeZone, now)
}

/** The first amount inside a wording's match. */
function amountIn(text: string, m: RegExpExecArray): Reading['amount'] {
  const a = amt('').exec(m[0])
  if (!a) return null
  return { digits: a[1]!, atEnd: m.index + a.index + a[0].length >= text.length }
}

function readingToResult(
  r: Reading,
  text: string,
  receiptNumber: string,
  timeZone: string,
  now: string,
): SmsResult {
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
