import { timeZone } from '../kernel/time-zone.ts'

/**
 * M-Pesa statements and SMS give wall-clock times in the tenant's time zone without an offset;
 * the kernel's zone (services/kernel/time-zone.ts) turns them into UTC instants.
 */
const wallToUtc = (
  zone: string,
  wall: { year: number; month: number; day: number; hour: number; minute: number; second: number },
) => timeZone(zone).localToUtcMs(wall)

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
  const ms = parseLocalTimeMs(text, timeZone)
  return Number.isNaN(ms) ? null : new Date(ms).toISOString()
}

/** `parseLocalTime` as epoch milliseconds, NaN when it is no time: what a statement row needs. */
export function parseLocalTimeMs(text: string, timeZone: string): number {
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
        return wallToUtc(timeZone, { year, month, day, hour, minute, second })
    }
  }
  let m = ISO_LOCAL.exec(s)
  if (m) {
    const [year, month, day] = [+m[1]!, +m[2]!, +m[3]!]
    return wallToUtc(timeZone, {
      year,
      month,
      day,
      hour: +(m[4] ?? 0),
      minute: +(m[5] ?? 0),
      second: +(m[6] ?? 0),
    })
  }
  m = DMY.exec(s)
  if (m) {
    let year = +m[3]!
    if (year < 100) year += 2000
    let hour = +(m[4] ?? 0)
    const ampm = m[7]?.toUpperCase()
    if (ampm === 'PM' && hour < 12) hour += 12
    if (ampm === 'AM' && hour === 12) hour = 0
    const [month, day, minute, second] = [+m[2]!, +m[1]!, +(m[5] ?? 0), +(m[6] ?? 0)]
    return wallToUtc(timeZone, { year, month, day, hour, minute, second })
  }
  if (/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(s)) return Date.parse(s)
  return Number.NaN
}
