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

/** The RFM segments a customer falls in, best first. */
export const SEGMENTS = [
  'champions',
  'loyal',
  'potential_loyalists',
  'new',
  'need_attention',
  'at_risk',
  'hibernating',
] as const
export type Segment = (typeof SEGMENTS)[number]

/** A customer's RFM scores (1–5) and the segment they give. */
export interface Rfm {
  recency_days: number
  r: number
  f: number
  m: number
  segment: Segment
}

/**
 * A counterparty as the analytics customers and counterparties lists answer it: totals in and out,
 * first and last seen, and with advanced analytics its RFM scores and segment.
 */
export interface CustomerView {
  counterparty: string
  counterparty_name: string | null
  counterparty_phone: string | null
  count: number
  total: number
  total_in: number
  total_out: number
  first_seen: string
  last_seen: string
  segment: Segment | null
  rfm: Omit<Rfm, 'segment'> | null
}

/** The totals of the analytics summary (money in major units). */
export interface SummaryTotals {
  total_transactions: number
  total_amount: number
  average_transaction: number
  active_days: number
  total_in: number
  total_out: number
}
