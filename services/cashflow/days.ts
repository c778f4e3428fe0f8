/**
 * Calendar days as `YYYY-MM-DD` strings in the tenant's time zone. Arithmetic runs on UTC
 * midnights, which is exact for whole days.
 */
export const DEFAULT_TIMEZONE = 'Africa/Nairobi'
const MS_PER_DAY = 86_400_000
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      })
    } catch {
      f = formatterFor(DEFAULT_TIMEZONE)
    }
    formatters.set(timeZone, f)
  }
  return f
}

/** The calendar day an instant falls on in a time zone. */
export function dayIn(timeZone: string, at: Date | string): string {
  const d = typeof at === 'string' ? new Date(at) : at
  return formatterFor(timeZone).format(d)
}

export function isDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false
  const d = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value
}

export function dayNumber(day: string): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / MS_PER_DAY)
}

export function dayFromNumber(n: number): string {
  return new Date(n * MS_PER_DAY).toISOString().slice(0, 10)
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

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const
