import { timeZone } from '../kernel/time-zone.ts'

/**
 * Calendar days as `YYYY-MM-DD` strings in the tenant's time zone (the kernel's time-zone module).
 */
export {
  addDays,
  DEFAULT_TIMEZONE,
  dayFromNumber,
  dayNumber,
  daysBetween,
  isDay,
  WEEKDAYS,
  weekdayOf,
} from '../kernel/time-zone.ts'

/** The calendar day an instant falls on in a time zone. */
export function dayIn(zone: string, at: Date | string): string {
  return timeZone(zone).dayOf(typeof at === 'string' ? Date.parse(at) : at.getTime())
}
