import { timeZone } from '../kernel/time-zone.ts'

const DAY = 86_400_000

/** Per zone, local day number → the zone's offset at that local midnight. */
const midnights = new Map<string, Map<number, number | null>>()

function midnightOffset(zone: string, dayNo: number): number | null {
  let days = midnights.get(zone)
  if (!days) {
    days = new Map()
    midnights.set(zone, days)
  }
  let off = days.get(dayNo)
  if (off === undefined) {
    const d = new Date(dayNo * DAY)
    const at = timeZone(zone).localToUtc({
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
    })
    off = at === null ? null : dayNo * DAY - Date.parse(at)
    if (days.size > 100_000) days.clear()
    days.set(dayNo, off)
  }
  return off
}

/**
 * The zone's offset all through a local day and a day either side (every instant the kernel's
 * conversion may look at), or null near a change of offset. A statement's rows fall on a few
 * hundred days, so this asks Intl a few times a day instead of once a row (the kernel caches
 * quarter hours, and 100,000 rows spread over years rarely share one).
 */
function steadyOffset(zone: string, dayNo: number): number | null {
  if (zone !== steadyZone) {
    steadyZone = zone
    steadyDays = steady.get(zone) ?? new Map()
    steady.set(zone, steadyDays)
  }
  let off = steadyDays.get(dayNo)
  if (off === undefined) {
    off = midnightOffset(zone, dayNo)
    for (const n of [dayNo - 1, dayNo + 1, dayNo + 2])
      if (off !== null && midnightOffset(zone, n) !== off) off = null
    if (steadyDays.size > 100_000) steadyDays.clear()
    steadyDays.set(dayNo, off)
  }
  return off
}
/** steadyOffset's answers, per zone: a row asks one map instead of eight (rows share days). */
const steady = new Map<string, Map<number, number | null>>()
let steadyZone = ''
let steadyDays = new Map<number, number | null>()

/**
 * M-Pesa statements and SMS give wall-clock times in the tenant's time zone without an offset.
 * These turn them into UTC instants.
 */
/** A local wall-clock time in `timeZone` as an ISO 8601 UTC string; null when out of range. */
export function localToUtc(
  zone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): string | null {
  // The kernel's checks, so an impossible time is refused the same way on either path.
  if (month < 1 || month > 12 || day < 1 || day > 31) return null
  if (hour > 23 || minute > 59 || second > 59) return null
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second)
  // Every month has a 28th: only later days need the calendar's word.
  if (day > 28 && new Date(asUtc).getUTCDate() !== day) return null
  const off = steadyOffset(zone, Math.floor(asUtc / DAY))
  if (off === null) return timeZone(zone).localToUtc({ year, month, day, hour, minute, second })
  return new Date(asUtc - off).toISOString()
}

/** The number `len` ASCII digits at `at` spell, or -1 if one of them is not a digit. */
function digitsAt(s: string, at: number, len: number): number {
  let v = 0
  for (let i = at; i < at + len; i++) {
    const c = s.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

const ISO_LOCAL = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/
const DMY =
  /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2,4})(?:[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp][Mm])?)?$/

/**
 * Reads a statement time: `2024-01-05 14:22:10`, `05/01/2024 14:22`, `5/1/24 2:22 PM` (day
 * first, as Kenyan statements print it), or an ISO instant with an offset.
 */
export function parseLocalTime(text: string, timeZone: string): string | null {
  const s = text.trim()
  // `2024-01-05 14:22:10` (full statements) and `05-01-2024 14:22:10` (the org portal), as every
  // row prints them, read by position without a pattern; what it gives is what ISO_LOCAL or DMY
  // would.
  if (s.length === 19 && s[10] === ' ' && s[13] === ':' && s[16] === ':') {
    const yearFirst = s[4] === '-' && s[7] === '-'
    if (yearFirst || (s[2] === '-' && s[5] === '-')) {
      const year = yearFirst ? digitsAt(s, 0, 4) : digitsAt(s, 6, 4)
      const month = digitsAt(s, yearFirst ? 5 : 3, 2)
      const day = yearFirst ? digitsAt(s, 8, 2) : digitsAt(s, 0, 2)
      const hour = digitsAt(s, 11, 2)
      const minute = digitsAt(s, 14, 2)
      const second = digitsAt(s, 17, 2)
      if (Math.min(year, month, day, hour, minute, second) >= 0)
        return localToUtc(timeZone, year, month, day, hour, minute, second)
    }
  }
  let m = ISO_LOCAL.exec(s)
  if (m) {
    return localToUtc(timeZone, +m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0))
  }
  m = DMY.exec(s)
  if (m) {
    let year = +m[3]!
    if (year < 100) year += 2000
    let hour = +(m[4] ?? 0)
    const ampm = m[7]?.toUpperCase()
    if (ampm === 'PM' && hour < 12) hour += 12
    if (ampm === 'AM' && hour === 12) hour = 0
    return localToUtc(timeZone, year, +m[2]!, +m[1]!, hour, +(m[5] ?? 0), +(m[6] ?? 0))
  }
  if (/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(s)) {
    const ms = Date.parse(s)
    return Number.isNaN(ms) ? null : new Date(ms).toISOString()
  }
  return null
}
