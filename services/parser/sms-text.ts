import { parseAmountText } from '../kernel/money.ts'
import { splitNamePhone } from './parsed.ts'

/**
 * The parts of an M-Pesa message around its wording (sms-wordings.ts): receipt, date, amounts,
 * cost and balance, where the party's words end, and the notices that move no money.
 */
// Every gap is \s*: real messages run words together ("Confirmed.on", "PMKsh20.00", "PM.New").
const KSH = String.raw`(?:Kshs?|KES)\.?\s*`
const NUM = String.raw`(\d[\d,]*(?:\.\d{1,2})?)`
export const AMT = KSH + NUM
export const MAX_LENGTH = 1000

export const RECEIPT = /(?:^|[^A-Z0-9])([A-Z0-9]{8,12})\s*[.,]?\s*Confirmed/i
export const DATE =
  /(\d{1,2})\/(\d{1,2})\/(\d{2,4})\s*(?:at\s*)?(\d{1,2}):(\d{2})(?::\d{2})?\s*(?:([AP])\.?M)?/i
export const COST = new RegExp(
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
export const NOT_MONEY: Array<[RegExp, string]> = [
  [/^(?![\s\S]*confirmed)[\s\S]*\bfailed\b/i, 'a failed transaction notice moves no money'],
  [
    /^(?![\s\S]*reversed)[\s\S]*(?:balance\s*was\s*:|your\s*account\s*balance\s*was\b)/i,
    'a balance enquiry moves no money',
  ],
]

/** Other notices, skipped when no money wording was found (a limit may close a repayment). */
export const NOTICES: Array<[RegExp, string]> = [
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

/** The party's words up to the date, the balance or the account number. */
export function cut(rest: string): string {
  const end = PARTY_END.exec(rest)
  return (end ? rest.slice(0, end.index) : rest).replace(/[\s.,]+$/, '').trim()
}

/** A name and phone from "0712345678 JOHN DOE", "JOHN DOE 2547***456" or "SHOP NAME". */
export function nameAndPhone(party: string): { name: string | null; phone: string | null } {
  const masked = /^(\+?\d[\d*]{5,12})\s+(.+)$|^(.+?)\s+(\+?\d[\d*]{5,12})$/.exec(party)
  if (masked && (masked[1] ?? masked[4])!.includes('*'))
    return { name: (masked[2] ?? masked[3])!.trim(), phone: null }
  return splitNamePhone(party)
}

/** The wallet's own balance: not M-Shwari's, KCB's, a savings account's or Fuliza's. */
export function balanceOf(text: string): number | null {
  for (const m of text.matchAll(BALANCE)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index)
    // The words since the last full stop or comma that is not inside a figure ("Ksh10.29 .M-PESA").
    const clause = before.split(/[.,](?!\d)/).pop()!
    if (/M-?Shwari|KCB|Saving|Fuliza|Lock|Ziidi/i.test(clause)) continue
    return parseAmountText(m[1])
  }
  return null
}
