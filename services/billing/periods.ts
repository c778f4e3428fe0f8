/**
 * Billing periods are calendar months anchored on the moment the subscription started: period n
 * runs from anchor+n months to anchor+(n+1) months, the day clamped to the month's length
 * (Jan 31 → Feb 28 → Mar 31), the time of day kept. Anchoring on the original date (rather than
 * chaining from the previous end) keeps a Jan 31 subscription on the 31st in March.
 */
export function addMonths(anchor: Date, months: number): Date {
  const y = anchor.getUTCFullYear()
  const m = anchor.getUTCMonth() + months
  const target = new Date(Date.UTC(y, m, 1))
  const lastDay = new Date(
    Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0),
  ).getUTCDate()
  return new Date(
    Date.UTC(
      target.getUTCFullYear(),
      target.getUTCMonth(),
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  )
}

/** Start and end of period `index` of a subscription anchored on `anchor`. */
export function periodOf(anchor: Date, index: number): { start: Date; end: Date } {
  return { start: addMonths(anchor, index), end: addMonths(anchor, index + 1) }
}

/**
 * The prorated charge (positive) or credit (negative) of moving from one monthly price to another
 * at `at` within [start, end): the price difference times the share of the period left, counted in
 * whole seconds, rounded half away from zero to the cent.
 *
 * @example
 * prorate({ fromCents: 0, toCents: 250000, start, end, at }) // 250000 * remaining / total
 */
export function prorate(o: {
  fromCents: number
  toCents: number
  start: Date
  end: Date
  at: Date
}): { amountCents: number; remainingSeconds: number; periodSeconds: number } {
  const periodSeconds = Math.max(1, Math.floor((o.end.getTime() - o.start.getTime()) / 1000))
  const remainingSeconds = Math.min(
    periodSeconds,
    Math.max(0, Math.floor((o.end.getTime() - o.at.getTime()) / 1000)),
  )
  const exact = ((o.toCents - o.fromCents) * remainingSeconds) / periodSeconds
  const amountCents = Math.sign(exact) * Math.round(Math.abs(exact))
  return { amountCents: amountCents === 0 ? 0 : amountCents, remainingSeconds, periodSeconds }
}

/** "12d 3h 4m" for an invoice line. */
export function describeSeconds(s: number): string {
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  return [d ? `${d}d` : '', h ? `${h}h` : '', m || (!d && !h) ? `${m}m` : '']
    .filter(Boolean)
    .join(' ')
}
