import { parseAmountText } from '../kernel/money.ts'
import { localToUtc } from './local-time.ts'
import { type ParsedTransaction, splitNamePhone } from './parsed.ts'

export type SmsResult =
  | { ok: true; kind: SmsKind; transaction: ParsedTransaction }
  | { ok: false; skipped: boolean; message: string }

export type SmsKind =
  | 'received'
  | 'deposit'
  | 'sent'
  | 'paybill'
  | 'buy_goods'
  | 'withdraw'
  | 'airtime'
  | 'reversal'

const AMT = String.raw`Ksh\s*([\d,]+(?:\.\d{1,2})?)`
const RECEIPT = /^\s*([A-Z0-9]{10})\s*Confirmed/i
const DATE = /on\s*(\d{1,2})\/(\d{1,2})\/(\d{2,4})\s*at\s*(\d{1,2}):(\d{2})\s*([AP]M)?/i
const BALANCE = new RegExp(String.raw`balance\s*(?:is|was)?\s*(?:now)?\s*:?\s*${AMT}`, 'i')

const kinds: Array<{ kind: SmsKind; re: RegExp }> = [
  {
    kind: 'reversal',
    re: /(?:Transaction\s*([A-Z0-9]{10})\s*has\s*been\s*reversed|Reversal\s*of\s*transaction\s*([A-Z0-9]{10}))/i,
  },
  { kind: 'received', re: new RegExp(String.raw`received\s*${AMT}\s*from\s*(.+?)\s*on\s*\d`, 'i') },
  // Till and pay bill owners: "Ksh500.00 received from 254712345678 JOHN DOE on ...".
  { kind: 'received', re: new RegExp(String.raw`${AMT}\s*received\s*from\s*(.+?)\s*on\s*\d`, 'i') },
  // Cash deposited at an agent: "Give Ksh1,000.00 cash to AGENT New M-PESA balance ...".
  {
    kind: 'deposit',
    re: new RegExp(String.raw`Give\s*${AMT}\s*cash\s*to\s*(.+?)\s*New\s*M-?PESA`, 'i'),
  },
  {
    kind: 'paybill',
    re: new RegExp(String.raw`${AMT}\s*sent\s*to\s*(.+?)\s*for\s*account\s*(.+?)\s*on\s*\d`, 'i'),
  },
  { kind: 'sent', re: new RegExp(String.raw`${AMT}\s*sent\s*to\s*(.+?)\s*on\s*\d`, 'i') },
  { kind: 'buy_goods', re: new RegExp(String.raw`${AMT}\s*paid\s*to\s*(.+?)\.?\s*on\s*\d`, 'i') },
  {
    kind: 'withdraw',
    re: new RegExp(String.raw`Withdraw\s*${AMT}\s*from\s*(.+?)\s*New\s*M-?PESA`, 'i'),
  },
  {
    kind: 'airtime',
    re: new RegExp(String.raw`bought\s*${AMT}\s*of\s*airtime(?:\s*for\s*(\d+))?`, 'i'),
  },
]

function timeOf(text: string, timeZone: string, fallback: string): string | null {
  const m = DATE.exec(text)
  if (!m) return fallback
  let year = +m[3]!
  if (year < 100) year += 2000
  let hour = +m[4]!
  const ampm = m[6]?.toUpperCase()
  if (ampm === 'PM' && hour < 12) hour += 12
  if (ampm === 'AM' && hour === 12) hour = 0
  return localToUtc(timeZone, year, +m[2]!, +m[1]!, hour, +m[5]!)
}

/**
 * Reads one M-Pesa confirmation SMS. Dates are day first (`5/1/24` is 5 January), amounts may
 * carry thousands separators, spacing is whatever the handset kept. `now` is used when a message
 * carries no date (reversal notices).
 */
export function parseSms(raw: string, timeZone: string, now: string): SmsResult {
  const text = raw.replace(/\s+/g, ' ').trim()
  if (/\bfailed\b/i.test(text) && !/confirmed/i.test(text)) {
    return { ok: false, skipped: true, message: 'a failed transaction notice moves no money' }
  }
  const receipt = RECEIPT.exec(text)?.[1]?.toUpperCase() ?? null
  if (!receipt)
    return { ok: false, skipped: false, message: 'not an M-Pesa confirmation: no receipt number' }
  const occurredAt = timeOf(text, timeZone, now)
  if (!occurredAt) return { ok: false, skipped: false, message: 'the date is not valid' }
  const balanceText = BALANCE.exec(text)?.[1]
  const balance = balanceText ? parseAmountText(balanceText) : null
  for (const { kind, re } of kinds) {
    const m = re.exec(text)
    if (!m) continue
    const base = { occurredAt, receiptNumber: receipt, balance }
    if (kind === 'reversal') {
      const original = (m[1] ?? m[2])!.toUpperCase()
      const credit = new RegExp(
        String.raw`${AMT}\s*(?:is|has\s*been)\s*(credited|debited)`,
        'i',
      ).exec(text)
      return {
        ok: true,
        kind,
        transaction: {
          ...base,
          amount: credit ? parseAmountText(credit[1]) : null,
          direction: credit?.[2]?.toLowerCase() === 'debited' ? 'out' : 'in',
          counterpartyName: null,
          counterpartyPhone: null,
          description: `Reversal of transaction ${original}`,
          reversalOf: original,
        },
      }
    }
    const amount = parseAmountText(m[1])
    if (!amount || amount <= 0)
      return { ok: false, skipped: false, message: 'the amount is not valid' }
    const party = (m[2] ?? '').replace(/\.$/, '').trim()
    const t = (
      direction: 'in' | 'out',
      name: string | null,
      phone: string | null,
      description: string,
    ): SmsResult => ({
      ok: true,
      kind,
      transaction: {
        ...base,
        amount,
        direction,
        counterpartyName: name,
        counterpartyPhone: phone,
        description,
      },
    })
    switch (kind) {
      case 'received': {
        const p = splitNamePhone(party)
        return t('in', p.name, p.phone, `Received from ${p.name ?? p.phone ?? 'unknown'}`)
      }
      case 'deposit':
        return t('in', party, null, `Deposit of funds at agent ${party}`)
      case 'sent': {
        const p = splitNamePhone(party)
        return t('out', p.name, p.phone, `Sent to ${p.name ?? p.phone ?? 'unknown'}`)
      }
      case 'paybill':
        return t('out', party, null, `Pay Bill to ${party} Acc. ${m[3]!.trim()}`)
      case 'buy_goods':
        return t('out', party, null, `Buy Goods at ${party}`)
      case 'withdraw': {
        const agent = party.includes(' - ') ? party.slice(party.indexOf(' - ') + 3) : party
        return t('out', agent.trim(), null, `Withdrawal at agent ${agent.trim()}`)
      }
      case 'airtime':
        return t('out', 'Safaricom', null, 'Airtime purchase')
    }
  }
  return { ok: false, skipped: false, message: 'not a recognised M-Pesa confirmation message' }
}
