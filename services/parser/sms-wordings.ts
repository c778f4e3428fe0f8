import type { Kind } from '../../schema/vocabulary.ts'
import { parseAmountText } from '../kernel/money.ts'
import { splitNamePhone } from './parsed.ts'

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

/**
 * The M-Pesa confirmation wordings the SMS reader knows (learnt from real messages; see
 * sms.test.ts for where each was learnt), and the notices that move no money.
 */
export type Direction = 'in' | 'out'
export interface Reading {
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
export const amt = (before: string, after = '') => new RegExp(before + AMT + after, 'i')
const REST = String.raw`\s*(.*)`
const SAVINGS = String.raw`(M-?Shwari(?:\s*Lock\s*Savings)?|KCB\s*M-?PESA|Lock\s*Savings|Ziidi)`
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
export const WORDINGS: Array<{
  re: RegExp
  read: (m: RegExpExecArray) => Omit<Reading, 'amount'>
}> = [
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
