import { KINDS } from '../../schema/vocabulary.ts'
import { toMajor } from '../kernel/money.ts'
import { roleOf } from './stored.ts'

/** Money in and out of one kind over a scope, in cents. */
export interface KindSums {
  inCount: number
  inCents: number
  outCount: number
  outCents: number
}

/** Kind → its sums. */
export type KindTotals = Map<string, KindSums>

/** Adds a count and cents of one kind in one direction. */
export function addToKind(
  totals: KindTotals,
  {
    kind,
    direction,
    count,
    cents,
  }: { kind: string; direction: 'in' | 'out'; count: number; cents: number },
): void {
  let k = totals.get(kind)
  if (!k) {
    k = { inCount: 0, inCents: 0, outCount: 0, outCents: 0 }
    totals.set(kind, k)
  }
  if (direction === 'in') {
    k.inCount += count
    k.inCents += cents
  } else {
    k.outCount += count
    k.outCents += cents
  }
}

/** One kind's line of the breakdown. */
export interface KindLine {
  count: number
  amount_in: number
  amount_out: number
}

/**
 * What the figures count (DESIGN §16, README "Analytics figures"): `revenue` the money customers
 * paid (customer payments in, less any out), `expenses` the money spent (supplier and bill
 * payments, charges, airtime: out, less any in), `net` revenue − expenses, `balance_change` money
 * in − money out of every kind (what the balance moved, loans, savings and own transfers
 * included), and `by_kind` every kind's count and money in and out, each kind its own line.
 */
export interface Figures {
  revenue: number
  expenses: number
  net: number
  balance_change: number
  by_kind: Record<string, KindLine>
}

/** Revenue, expenses, net and the breakdown of kind totals. Every kind has a line, zero or not. */
export function figuresOf(totals: KindTotals): Figures {
  let revenue = 0
  let expenses = 0
  let balance = 0
  const byKind: Record<string, KindLine> = {}
  for (const kind of KINDS) byKind[kind] = { count: 0, amount_in: 0, amount_out: 0 }
  for (const [kind, k] of totals) {
    const role = roleOf(kind)
    if (role === 'revenue') revenue += k.inCents - k.outCents
    else if (role === 'expense') expenses += k.outCents - k.inCents
    balance += k.inCents - k.outCents
    if (k.inCount + k.outCount === 0) continue
    byKind[kind || 'unknown'] = {
      count: k.inCount + k.outCount,
      amount_in: toMajor(k.inCents),
      amount_out: toMajor(k.outCents),
    }
  }
  return {
    revenue: toMajor(revenue),
    expenses: toMajor(expenses),
    net: toMajor(revenue - expenses),
    balance_change: toMajor(balance),
    by_kind: byKind,
  }
}
