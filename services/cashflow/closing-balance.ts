/** A transaction of a batch that carried a balance (cents; `move` signed, money in positive). */
export interface BalanceRow {
  ms: number
  move: number
  balance: number
}

/**
 * The balance after the latest instant of a batch. M-Pesa books a Fuliza-funded payment, its
 * overdraft and its charge in one second and prints them in an order that is not always the
 * booking order (DESIGN §16), so "the last row of the latest second" may be a balance in the
 * middle of the group. Walking the instants oldest first from the balance known before the
 * batch, a group ends on the balance that the one before plus the group's moves gives; without
 * one, on the balance no other row of the group started from; failing both, on the last row.
 */
export function closingBalance(
  rows: BalanceRow[],
  before: { ms: number; balance: number } | null,
): { ms: number; balance: number } | null {
  if (rows.length === 0) return null
  const sorted = rows.map((r, i) => ({ ...r, i })).sort((a, b) => a.ms - b.ms || a.i - b.i)
  let running = before
  for (let k = 0; k < sorted.length; ) {
    let end = k + 1
    while (end < sorted.length && sorted[end]!.ms === sorted[k]!.ms) end++
    const group = sorted.slice(k, end)
    k = end
    let closing = group.at(-1)!.balance
    if (group.length > 1) {
      const net = group.reduce((s, r) => s + r.move, 0)
      const starts = new Set(group.map((r) => r.balance - r.move))
      const fromBefore =
        running && running.ms < group[0]!.ms
          ? group.find((r) => r.balance === running!.balance + net)
          : undefined
      const unstarted = group.filter((r) => !starts.has(r.balance))
      if (fromBefore) closing = fromBefore.balance
      else if (unstarted.length === 1) closing = unstarted[0]!.balance
    }
    running = { ms: group[0]!.ms, balance: closing }
  }
  return running
}
