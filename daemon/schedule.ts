import { Cron } from 'croner'

/**
 * When a recurring job runs: an interval (`30m`, `6h`, `1d`: every so long, counted from start)
 * or a five-field cron line in UTC (`0 3 * * *`: minute, hour, day of month, month, day of week),
 * read by croner: `*`, numbers, `a-b` ranges, `,` lists, `/n` steps, names (`MON`, `JAN-MAR`),
 * `L` (last day), `W`, `#` and the nicknames `@daily`, `@weekly`, … When both day fields are
 * restricted, either may match (cron's rule).
 *
 * @example
 * parseSchedule('6h').next(new Date('2030-01-01T00:00:00Z')) // 2030-01-01T06:00:00Z
 * parseSchedule('0 3 * * *').next(new Date('2030-01-01T05:00:00Z')) // 2030-01-02T03:00:00Z
 */
export interface Schedule {
  text: string
  /** The first run strictly after `from`. */
  next(from: Date): Date
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
/** croner's name of a field → ours and its range, to say what is wrong in cron's own words. */
const FIELDS: Record<string, { index: number; name: string; range: string }> = {
  minute: { index: 0, name: 'minute', range: '0-59' },
  hour: { index: 1, name: 'hour', range: '0-23' },
  day: { index: 2, name: 'day of month', range: '1-31' },
  month: { index: 3, name: 'month', range: '1-12' },
  dayOfWeek: { index: 4, name: 'day of week', range: '0-7' },
}

/** Throws an Error saying what is wrong (the caller names the setting). */
export function parseSchedule(text: string): Schedule {
  const trimmed = text.trim()
  const interval = /^(\d+)(s|m|h|d)$/.exec(trimmed)
  if (interval) {
    const ms = Number(interval[1]) * UNITS[interval[2]!]!
    if (ms < 1000) throw new Error(`'${text}' is shorter than a second`)
    return { text: trimmed, next: (from) => new Date(from.getTime() + ms) }
  }
  const parts = trimmed.split(/\s+/)
  if (parts.length !== 5 && !(parts.length === 1 && trimmed.startsWith('@')))
    throw new Error(`'${text}' is neither an interval (6h, 1d) nor a cron line (0 3 * * *)`)
  const cron = readCron(trimmed, parts)
  if (!cron.nextRun(new Date(0))) throw new Error(`'${text}' never runs`)
  return {
    text: trimmed,
    next(from) {
      const at = cron.nextRun(from)
      if (!at) throw new Error(`'${text}' never runs`)
      return at
    },
  }
}

function readCron(line: string, parts: string[]): Cron {
  try {
    // `sloppyRanges` keeps `5/20` (from 5, every 20) as classic cron reads it.
    return new Cron(line, { timezone: 'UTC', mode: '5-part', paused: true, sloppyRanges: true })
  } catch (e) {
    const reason = String((e as Error).message).replace(/^CronPattern: /, '')
    const field = /^Invalid value for (\w+)/.exec(reason)?.[1]
    const f = field ? FIELDS[field] : undefined
    if (f) throw new Error(`cron ${f.name} '${parts[f.index]}' is outside ${f.range}`)
    throw new Error(`'${line}' is not a cron line this reads: ${reason}`)
  }
}
