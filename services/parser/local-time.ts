import { timeZone } from '../kernel/time-zone.ts'

/**
 * M-Pesa statements and SMS give wall-clock times in the tenant's time zone without an offset.
 * These turn them into UTC instants (the kernel caches zone offsets: a 100,000-row statement does
 * not call Intl once per row).
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
  return timeZone(zone).localToUtc(year, month, day, hour, minute, second)
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
