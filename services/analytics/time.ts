import { invalidField } from '../kernel/errors.ts'

export const DEFAULT_TIMEZONE = 'Africa/Nairobi'
const QUARTER_HOUR = 15 * 60 * 1000
const DAY = 86_400_000

/**
 * Local days in a tenant's time zone without calling Intl per row: a zone's UTC offset is constant
 * within a quarter hour (every real transition falls on one), so offsets are cached per quarter.
 *
 * @example
 * const zone = timeZone('Africa/Nairobi')
 * zone.dayOf(Date.parse('2026-03-01T22:30:00Z')) // '2026-03-02'
 */
export interface TimeZone {
  name: string
  /** The local calendar day (YYYY-MM-DD) of an instant. */
  dayOf(ms: number): string
  /** The instant a local day starts. */
  startOf(day: string): number
}

const zones = new Map<string, TimeZone>()

export function timeZone(name: string | undefined): TimeZone {
  const zoneName = name || DEFAULT_TIMEZONE
  let zone = zones.get(zoneName)
  if (!zone) {
    zone = makeZone(zoneName)
    zones.set(zoneName, zone)
  }
  return zone
}

function makeZone(name: string): TimeZone {
  let fmt: Intl.DateTimeFormat
  try {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
  } catch {
    return makeZone(DEFAULT_TIMEZONE)
  }
  const offsets = new Map<number, number>()
  const offsetAt = (ms: number): number => {
    const bucket = Math.floor(ms / QUARTER_HOUR)
    let off = offsets.get(bucket)
    if (off === undefined) {
      const at = bucket * QUARTER_HOUR
      const p: Record<string, number> = {}
      for (const part of fmt.formatToParts(new Date(at))) {
        if (part.type !== 'literal') p[part.type] = Number(part.value)
      }
      const local = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!)
      off = local - at
      if (offsets.size > 200_000) offsets.clear()
      offsets.set(bucket, off)
    }
    return off
  }
  return {
    name,
    dayOf: (ms) => new Date(ms + offsetAt(ms)).toISOString().slice(0, 10),
    startOf(day) {
      const midnight = Date.parse(`${day}T00:00:00.000Z`)
      let guess = midnight - offsetAt(midnight)
      guess = midnight - offsetAt(guess)
      return guess
    },
  }
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + n * DAY).toISOString().slice(0, 10)
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY)
}

/** Monday of the ISO week a day falls in. */
export function weekOf(day: string): string {
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay()
  return addDays(day, -((dow + 6) % 7))
}

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
