import type { Kind } from '../../schema/vocabulary.ts'

/** A transaction as the parser reads it from any source, before it is stored. Amounts in cents. */
export interface ParsedTransaction {
  occurredAt: string
  /** null only for a reversal message that names the reversed receipt but no amount. */
  amount: number | null
  direction: 'in' | 'out'
  counterpartyName: string | null
  counterpartyPhone: string | null
  description: string
  receiptNumber: string | null
  balance: number | null
  /** Receipt number of the transaction this one reverses. */
  reversalOf?: string
  /** What the money movement is (schema/vocabulary.ts KINDS); derived from the row when absent. */
  kind?: Kind
  /**
   * Which leg of its receipt this row is (DESIGN §16 "Legs"): '' the movement itself, 'charge' its
   * transaction charge, 'loan' the overdraft drawn for it, 'repay' a repayment. Derived from `kind`.
   */
  leg?: string
}

export interface RowError {
  row?: number
  index?: number
  field?: string
  message: string
}

/*
 * The patterns of the functions a statement's every row goes through are made once here: a
 * pattern written inside a function is a new RegExp object each time the line runs, six a row,
 * which a 100,000-row statement's reading thread then has to collect.
 */
const PHONE = /^(?:\+?254|0)?[17]\d{8}$/
const BLANKS_AND_DASHES = /[\s-]/g
const PLUS = /^\+/
const ACCOUNT_REF = /\s+Acc(?:ount)?\.?\s.*$/i
const BLANK = /\s/
const BLANKS = /\s+/

/** A full Kenyan mobile number in the 2547XXXXXXXX form; masked or partial numbers give null. */
export function normalisePhone(text: string | null | undefined): string | null {
  if (!text) return null
  const s = text.replace(BLANKS_AND_DASHES, '')
  if (!PHONE.test(s)) return null
  const digits = s.replace(PLUS, '')
  if (digits.startsWith('254')) return digits
  if (digits.startsWith('0')) return `254${digits.slice(1)}`
  return `254${digits}`
}

/**
 * Splits a statement's "Details" text (`Funds received from 0712345678 - JOHN DOE`,
 * `Pay Bill to 888880 - KPLC PREPAID Acc. 1234`, `Merchant Payment to 123456 - SHELL KAREN`) into
 * a counterparty name and phone.
 */
export function counterpartyOf(details: string): { name: string | null; phone: string | null } {
  const dash = details.indexOf(' - ')
  if (dash < 0) return { name: null, phone: null }
  const before = details.slice(0, dash).trim()
  let name = details.slice(dash + 3).trim()
  const acc = ACCOUNT_REF.exec(name)
  if (acc) name = name.slice(0, acc.index).trim()
  return { name: name || null, phone: normalisePhone(lastWordOf(before)) }
}

/**
 * The last word of a trimmed text. Found from its last space, without splitting the whole text
 * into an array per row; a tab or other blank after that space takes the general way.
 */
function lastWordOf(text: string): string {
  const word = text.slice(text.lastIndexOf(' ') + 1)
  return BLANK.test(word) ? (text.split(BLANKS).pop() ?? '') : word
}

/** Splits "JOHN KAMAU 0712345678" into its name and phone. */
export function splitNamePhone(text: string): { name: string | null; phone: string | null } {
  const leading = /^((?:\+?254|0)[17]\d{8})[\s-]+(.+)$/.exec(text.trim())
  if (leading) return { name: leading[2]!.trim() || null, phone: normalisePhone(leading[1]) }
  const m = /^(.*?)[\s-]*((?:\+?254|0)[17]\d{8}|[17]\d{8})?\s*$/.exec(text.trim())
  const name = m?.[1]?.trim() || null
  return { name, phone: normalisePhone(m?.[2]) }
}
