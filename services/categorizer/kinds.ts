import { KIND_ROLE, type Kind } from '../../schema/vocabulary.ts'
import type { Category } from './text.ts'

/**
 * The category a kind has of itself (DESIGN §16 "Kinds"), used unless the tenant's own rule or an
 * override says otherwise: money that is not the business's earning or spending (loans, savings,
 * own transfers, cash at an agent, reversals, settlement to the bank) and M-Pesa's charges are
 * Other; airtime and bundles are Utilities, as the built-in airtime rule has them. Customer and
 * supplier payments have none: their words decide.
 */
export const KIND_CATEGORY: Partial<Record<Kind, Category>> = {
  charge: 'Other',
  loan_drawn: 'Other',
  loan_repaid: 'Other',
  savings_in: 'Other',
  savings_out: 'Other',
  own_transfer: 'Other',
  cash_deposit: 'Other',
  cash_withdrawal: 'Other',
  airtime: 'Utilities',
  reversal: 'Other',
  settlement: 'Other',
}

/** How sure a kind's own category is: the kind was read from M-Pesa's own words. */
const KIND_CONFIDENCE = 0.9

/**
 * What the entry's kind makes of a decided category. `ownWord` is true when the owner decided it
 * (their rule, or what their overrides taught): it stands, except that money which is not revenue
 * (a Fuliza draw, an M-Shwari withdrawal: money in, never earned) is never Revenue. Otherwise a
 * kind with a category of its own takes it. The category source is then 'default': the platform's
 * default for the kind.
 */
/** A decided category as the engine gives it (engine.ts CategorizeResult, which imports this). */
interface Decided {
  category: Category
  confidence: number
  source: string
  rule_id: string | null
}

export function applyKind<R extends Decided>(
  r: R,
  { kind, ownWord }: { kind: Kind | null | undefined; ownWord: boolean },
): R | (Decided & { source: 'default' }) {
  if (!kind) return r
  const own = KIND_CATEGORY[kind]
  const notRevenue = r.category === 'Revenue' && KIND_ROLE[kind] !== 'revenue'
  if (ownWord && !notRevenue) return r
  if (!own && !notRevenue) return r
  const category = own ?? 'Other'
  if (category === r.category) return r
  return { category, confidence: KIND_CONFIDENCE, source: 'default', rule_id: null }
}
