import type { TransactionEvent } from '../schema/events.ts'

/** A deterministic PRNG (mulberry32) so every run sees the same synthetic business. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Sales multipliers Monday..Sunday. */
export const WEEKLY_SALES = [0.9, 1.0, 1.0, 1.05, 1.3, 1.5, 0.6]

export interface SyntheticBusiness {
  transactions: TransactionEvent[]
  /** Net per day in cents, by day, for hand checks. */
  netByDay: Map<string, number>
  finalBalance: number
}

const round2 = (v: number) => Math.round(v * 100) / 100

/**
 * A shop's year (or years): sales that grow and follow a weekly pattern, daily stock purchases,
 * a supplier paid every Monday, rent on the 1st and three salaries on the 28th, with noise.
 * Times are 08:00–20:00 in Nairobi (UTC+3), so the local day equals the UTC day.
 */
export function syntheticBusiness(opts: {
  start: string
  days: number
  seed?: number
  idPrefix?: string
  openingBalance?: number
}): SyntheticBusiness {
  const rand = prng(opts.seed ?? 42)
  const noise = (spread: number) => 1 + spread * (rand() * 2 - 1)
  const prefix = opts.idPrefix ?? 'txn_syn'
  const transactions: TransactionEvent[] = []
  const netByDay = new Map<string, number>()
  let balance = opts.openingBalance ?? 300_000
  let seq = 0
  const startMs = Date.parse(`${opts.start}T00:00:00Z`)
  const add = (
    day: string,
    hour: number,
    direction: 'in' | 'out',
    amount: number,
    category: string,
    counterparty: string,
    description: string,
  ) => {
    const value = round2(amount)
    balance = round2(balance + (direction === 'in' ? value : -value))
    netByDay.set(
      day,
      (netByDay.get(day) ?? 0) + Math.round(value * 100) * (direction === 'in' ? 1 : -1),
    )
    const minutes = Math.floor(rand() * 59)
    transactions.push({
      transaction_id: `${prefix}_${String(++seq).padStart(7, '0')}`,
      occurred_at: `${day}T${String(hour - 3).padStart(2, '0')}:${String(minutes).padStart(2, '0')}:00.000Z`,
      amount: value,
      direction,
      counterparty_name: counterparty,
      description,
      balance,
      source: 'statement',
      category,
      category_confidence: 0.9,
      category_source: 'rule',
    })
  }
  for (let d = 0; d < opts.days; d++) {
    const date = new Date(startMs + d * 86_400_000)
    const day = date.toISOString().slice(0, 10)
    const weekday = (date.getUTCDay() + 6) % 7
    const dom = date.getUTCDate()
    const salesLevel = (20_000 + 15 * d) * WEEKLY_SALES[weekday]!
    const customers = 6
    for (let c = 0; c < customers; c++) {
      add(
        day,
        9 + c,
        'in',
        (salesLevel / customers) * noise(0.35),
        'sales',
        `Customer ${1 + Math.floor(rand() * 40)}`,
        'Payment received',
      )
    }
    add(day, 16, 'out', 6_000 * noise(0.3), 'inventory', 'Wholesale Market', 'Stock purchase')
    if (weekday === 0) {
      add(day, 10, 'out', 28_000 * noise(0.05), 'suppliers', 'Acme Supplies', 'Supplier payment')
    }
    if (dom === 1) add(day, 8, 'out', 45_000, 'rent', 'Landlord Properties', 'Rent payment')
    if (dom === 28) {
      for (const name of ['Jane Wanjiru', 'Peter Otieno', 'Mary Akinyi']) {
        add(day, 18, 'out', 25_000, 'salaries', name, 'Salary payment')
      }
    }
  }
  return { transactions, netByDay, finalBalance: balance }
}
