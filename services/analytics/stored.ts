import type { ReceiptReport } from '../../schema/events.ts'

/** Rollup key for a transaction without a category. */
export const UNCATEGORIZED = 'Uncategorized'

/** The stored shape of one transaction (snake_case columns). */
export interface StoredTransaction {
  tenant_id: string
  id: string
  user_id: string | null
  occurred_at: string
  local_day: string
  amount_cents: number
  direction: 'in' | 'out'
  counterparty_name: string | null
  counterparty_phone: string | null
  counterparty_key: string | null
  description: string
  receipt_number: string | null
  balance_cents: number | null
  category: string | null
  category_confidence: number | null
  category_source: string | null
  rule_id: string | null
  source: string
  /** Every channel's report of its receipt (not a column: receipt_reports, ledger.ts). */
  reports?: readonly ReceiptReport[]
}

/** Phone digits in international form (a leading 0 becomes Kenya's 254). */
export function normalizePhone(phone: string | null | undefined): string | null {
  if (!phone) return null
  let digits = phone.replace(/\D/g, '')
  if (digits.length === 10 && digits.startsWith('0')) digits = `254${digits.slice(1)}`
  if (digits.length === 9 && /^[17]/.test(digits)) digits = `254${digits}`
  return digits.length >= 6 ? digits : null
}

/** Groups a counterparty: by phone when known, otherwise by its name, case and spaces folded. */
export function counterpartyKey(name: string | null | undefined, phone: string | null | undefined) {
  const digits = normalizePhone(phone)
  if (digits) return `tel:${digits}`
  const folded = name?.trim().toLowerCase().replace(/\s+/g, ' ')
  return folded ? `name:${folded}` : null
}
