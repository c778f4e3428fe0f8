import type { Kind } from '../../schema/vocabulary.ts'
import { AMT, cut } from './sms-text.ts'

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

export const amt = (before: string, after = '') => new RegExp(before + AMT + after, 'i')
const REST = String.raw`\s*(.*)`
const SAVINGS = String.raw`(M-?Shwari(?:\s*Lock\s*Savings)?|KCB\s*M-?PESA|Lock\s*Savings|Ziidi)`

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

/** A move between the wallet and a savings account (M-Shwari, KCB M-PESA, Lock Savings, Ziidi). */
const savingsMove = (raw: string, direction: Direction) => {
  const name = savingsName(raw)
  const out = direction === 'out'
  return {
    wording: out ? 'to_savings' : 'from_savings',
    kind: out ? 'savings_out' : 'savings_in',
    direction,
    party: name,
    description: `Transfer ${out ? 'to' : 'from'} ${name}`,
  } satisfies Omit<Reading, 'amount'>
}

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
    read: (m) => savingsMove(m[2]!, 'out'),
  },
  {
    re: new RegExp(
      String.raw`(?:${AMT}\s*transferr?ed|transferr?ed\s*${AMT})\s*from\s*(?:your\s*)?${SAVINGS}`,
      'i',
    ),
    read: (m) => savingsMove(m[3]!, 'in'),
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
