/**
 * Time zones and calendar days, one module for every service: a tenant's days begin at its local
 * midnight (DESIGN §11, default Africa/Nairobi). Intl is not called per row: a zone's UTC offset is
 * constant within a quarter hour (every real transition falls on one), so offsets are cached per
 * quarter hour.
 *
 * @example
 * const zone = timeZone('Africa/Nairobi')
 * zone.dayOf(Date.parse('2026-03-01T22:30:00Z')) // '2026-03-02'
 * zone.localToUtc({ year: 2026, month: 3, day: 2, hour: 1, minute: 30 }) // '2026-03-01T22:30:00.000Z'
 */
export const DEFAULT_TIMEZONE = 'Africa/Nairobi'

const QUARTER_HOUR = 15 * 60 * 1000
const DAY = 86_400_000

export interface TimeZone {
  name: string
  /** The local calendar day (YYYY-MM-DD) of an instant. */
  dayOf(ms: number): string
  /** The instant a local day starts. */
  startOf(day: string): number
  /** A local wall-clock time as an ISO 8601 UTC string; null when it is no real date or time. */
  localToUtc(wall: WallTime): string | null
  /** `localToUtc` as epoch milliseconds; NaN when it is no real date or time. */
  localToUtcMs(wall: WallTime): number
}

/** A local wall-clock time; the time of day defaults to midnight. */
export interface WallTime {
  year: number
  month: number
  day: number
  hour?: number
  minute?: number
  second?: number
}

const zones = new Map<string, TimeZone>()

/** The zone of that IANA name (an unknown or empty name: the default zone). */
export function timeZone(name: string | null | undefined): TimeZone {
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
    return timeZone(DEFAULT_TIMEZONE)
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
  /**
   * The instant of a local wall-clock time given as if it were UTC, as Temporal's 'compatible'
   * reads it: a time that came twice (clocks going back) is its first coming, and a time the
   * clocks skipped is read with the offset from before the skip, so it lands after the gap (03:30
   * for a skipped 02:30, 01:00 for a skipped midnight) and never in the day before.
   */
  const fromLocal = (asUtc: number) => {
    const before = offsetAt(asUtc - DAY)
    const after = offsetAt(asUtc + DAY)
    const early = asUtc - Math.max(before, after)
    const late = asUtc - Math.min(before, after)
    if (offsetAt(early) === Math.max(before, after)) return early
    if (offsetAt(late) === Math.min(before, after)) return late
    return asUtc - before
  }
  const steady = new Map<number, number | null>()
  /**
   * The offset all through a local day (a number of days since 1970) and a day either side, or
   * null near a change of offset. Rows of a statement spread over years rarely share a quarter
   * hour but fall on a few hundred days: a day's answer saves two Intl lookups a row.
   */
  const steadyOffset = (dayNo: number): number | null => {
    let off = steady.get(dayNo)
    if (off === undefined) {
      const midnightOffset = (n: number) => n * DAY - fromLocal(n * DAY)
      off = midnightOffset(dayNo)
      for (const n of [dayNo - 1, dayNo + 1, dayNo + 2])
        if (off !== null && midnightOffset(n) !== off) off = null
      if (steady.size > 100_000) steady.clear()
      steady.set(dayNo, off)
    }
    return off
  }
  return {
    name,
    dayOf: (ms) => new Date(ms + offsetAt(ms)).toISOString().slice(0, 10),
    startOf: (day) => fromLocal(Date.parse(`${day}T00:00:00.000Z`)),
    localToUtc(wall) {
      const ms = this.localToUtcMs(wall)
      return Number.isNaN(ms) ? null : new Date(ms).toISOString()
    },
    localToUtcMs({ year, month, day, hour = 0, minute = 0, second = 0 }) {
      if (month < 1 || month > 12 || day < 1 || day > 31) return Number.NaN
      if (hour > 23 || minute > 59 || second > 59) return Number.NaN
      const asUtc = Date.UTC(year, month - 1, day, hour, minute, second)
      // Every month has a 28th: only later days need the calendar's word.
      if (day > 28 && new Date(asUtc).getUTCDate() !== day) return Number.NaN
      const off = steadyOffset(Math.floor(asUtc / DAY))
      return off === null ? fromLocal(asUtc) : asUtc - off
    },
  }
}

/** The calendar day an instant falls on in the zone of that IANA name. */
export function dayIn(zone: string, at: Date | string): string {
  return timeZone(zone).dayOf(typeof at === 'string' ? Date.parse(at) : at.getTime())
}

/** Whether a string is a real calendar day `YYYY-MM-DD`. */
export function isDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false
  const d = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value
}

/** Days since 1970-01-01 (day arithmetic on UTC midnights is exact for whole days). */
export function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / DAY)
}

export function dayFromNumber(n: number): string {
  return new Date(n * DAY).toISOString().slice(0, 10)
}

export function addDays(day: string, n: number): string {
  return dayFromNumber(dayNumber(day) + n)
}

export function daysBetween(from: string, to: string): number {
  return dayNumber(to) - dayNumber(from)
}

/** 0 = Monday … 6 = Sunday. */
export function weekdayOf(day: string): number {
  return (dayNumber(day) + 3) % 7
}

/** Monday of the ISO week a day falls in. */
export function weekOf(day: string): string {
  return addDays(day, -weekdayOf(day))
}

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const
