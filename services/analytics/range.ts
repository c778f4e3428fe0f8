/**
 * Query ranges (`from`/`to`) as instants and as whole local days; zones and days are the kernel's
 * time-zone module.
 */

import { invalidField } from '../kernel/errors.ts'
import { addDays, type TimeZone } from '../kernel/time-zone.ts'

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/

/** Normalises a stored or given instant to `YYYY-MM-DDTHH:mm:ss.sssZ` (text order = time order). */
export function toIsoInstant(value: string, field: string): string {
  if (!DATE_TIME.test(value) && !DATE_ONLY.test(value)) {
    throw invalidField(field, 'must be an ISO 8601 date or date-time')
  }
  const ms = Date.parse(value)
  if (!Number.isFinite(ms)) throw invalidField(field, 'must be an ISO 8601 date or date-time')
  return new Date(ms).toISOString()
}

/**
 * A `from`/`to` query range as instants: `[fromMs, toMs)`. A plain date means a local day in the
 * tenant's zone, and `to` includes that whole day; a date-time `to` is inclusive of that instant.
 */
export interface Range {
  fromMs: number | null
  /** Exclusive upper bound. */
  toMs: number | null
}

export function parseRange(
  zone: TimeZone,
  from: string | undefined,
  to: string | undefined,
): Range {
  const bound = (value: string | undefined, field: string, end: boolean): number | null => {
    if (value === undefined || value === '') return null
    if (DATE_ONLY.test(value)) {
      if (!Number.isFinite(Date.parse(`${value}T00:00:00Z`))) {
        throw invalidField(field, 'must be an ISO 8601 date or date-time')
      }
      return zone.startOf(end ? addDays(value, 1) : value)
    }
    const ms = Date.parse(toIsoInstant(value, field))
    return end ? ms + 1 : ms
  }
  const range = { fromMs: bound(from, 'from', false), toMs: bound(to, 'to', true) }
  if (range.fromMs !== null && range.toMs !== null && range.fromMs > range.toMs) {
    throw invalidField('from', 'must not be after to')
  }
  return range
}

/**
 * Splits a range into whole local days (read from rollups) and at most two partial edges (read
 * from transactions through the time index).
 */
export interface DaySplit {
  /** Whole days: fromDay ≤ day ≤ toDay; null bounds are open. Empty when fromDay > toDay. */
  fromDay: string | null
  toDay: string | null
  /** Partial edge intervals `[fromMs, toMs)` read from the transactions table. */
  edges: Array<{ fromMs: number; toMs: number }>
}

export function splitRange(zone: TimeZone, range: Range): DaySplit {
  const edges: DaySplit['edges'] = []
  let fromDay: string | null = null
  let toDay: string | null = null
  if (range.fromMs !== null) {
    const day = zone.dayOf(range.fromMs)
    if (zone.startOf(day) === range.fromMs) fromDay = day
    else {
      fromDay = addDays(day, 1)
      const edgeEnd = Math.min(zone.startOf(fromDay), range.toMs ?? Number.POSITIVE_INFINITY)
      edges.push({ fromMs: range.fromMs, toMs: edgeEnd })
    }
  }
  if (range.toMs !== null) {
    const day = zone.dayOf(range.toMs)
    const start = zone.startOf(day)
    toDay = addDays(day, -1)
    if (start !== range.toMs) {
      const edgeStart = Math.max(start, range.fromMs ?? Number.NEGATIVE_INFINITY)
      const sameAsFirst = edges.some((e) => e.fromMs === edgeStart)
      if (!sameAsFirst && edgeStart < range.toMs)
        edges.push({ fromMs: edgeStart, toMs: range.toMs })
    }
  }
  return { fromDay, toDay, edges }
}
