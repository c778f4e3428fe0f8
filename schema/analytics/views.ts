import type { Kind } from '../vocabulary.ts'

/**
 * A transaction as the analytics API reads it back (DESIGN §11): money in major units, the
 * counterparty, its category and who set it. The dashboard reads the same shape.
 */
export interface TransactionView {
  id: string
  occurred_at: string
  amount: number
  direction: 'in' | 'out'
  counterparty_name: string | null
  counterparty_phone: string | null
  description: string
  receipt_number: string | null
  balance: number | null
  category: string | null
  category_confidence: number | null
  category_source: string | null
  source: string
  user_id: string | null
  kind: Kind | null
  leg: string
}
