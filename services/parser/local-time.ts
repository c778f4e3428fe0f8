/**
 * M-Pesa statements and SMS give wall-clock times in the tenant's time zone without an offset.
 * These turn them into UTC instants. Offsets are cached per zone and day: a 100,000-row statement
 * must not call Intl once per row.
 */
const formatters = new Map<string, Intl.DateTimeFormat>()
const offsets = new Map<string, Map<number, number>>()

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** The zone's offset from UTC in ms at a UTC instant. */
function offsetAt(timeZone: string, utcMs: number): number {
  const parts: Record<string, number> = {}
  for (const p of formatterFor(timeZone).formatToParts(new Date(utcMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value)
  }
  const asUtc = Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day!,
    parts.hour!,
    parts.minute!,
    parts.second!,
  )
  return asUtc - Math.floor(utcMs / 1000) * 1000
}

/** A local wall-clock time in `timeZone` as an ISO 8601 UTC string; null when out of range. */
export function localToUtc(
  timeZone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): string | null {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
    return null
  const guess = Date.UTC(year, month - 1, day, hour, minute, second)
  const check = new Date(guess)
  if (check.getUTCDate() !== day) return null
  let zone = offsets.get(timeZone)
  if (!zone) {
    zone = new Map()
    offsets.set(timeZone, zone)
  }
  const key = ((year * 13 + month) * 32 + day) * 24 + hour
  let off = zone.get(key)
  if (off === undefined) {
    off = offsetAt(timeZone, guess)
    if (zone.size > 100_000) zone.clear()
    zone.set(key, off)
  }
  return new Date(guess - off).toISOString()
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
