/**
 * When a recurring job runs: an interval (`30m`, `6h`, `1d`: every so long, counted from start)
 * or a five-field cron line in UTC (`0 3 * * *`: minute, hour, day of month, month, day of week;
 * `*`, numbers, `a-b` ranges, `,` lists and `/n` steps).
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
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const

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
  if (parts.length !== 5)
    throw new Error(`'${text}' is neither an interval (6h, 1d) nor a cron line (0 3 * * *)`)
  const sets = parts.map((p, i) => cronField(p, FIELDS[i]!))
  // Day of week 7 is Sunday, as 0.
  if (sets[4]!.has(7)) sets[4]!.add(0)
  const [minutes, hours, days, months, weekdays] = sets as [
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
    Set<number>,
  ]
  const anyDay = parts[2] === '*'
  const anyWeekday = parts[4] === '*'
  return {
    text: trimmed,
    next(from) {
      const t = new Date(from.getTime())
      t.setUTCSeconds(0, 0)
      // At most a little over four years of minutes: enough for 29 February.
      for (let i = 0; i < 4 * 366 * 24 * 60 + 1; i++) {
        t.setUTCMinutes(t.getUTCMinutes() + 1)
        if (!months.has(t.getUTCMonth() + 1) || !hours.has(t.getUTCHours())) continue
        if (!minutes.has(t.getUTCMinutes())) continue
        // Cron's rule: when both day fields are restricted, either may match.
        const dom = days.has(t.getUTCDate())
        const dow = weekdays.has(t.getUTCDay())
        const dayOk = anyDay && anyWeekday ? true : anyDay ? dow : anyWeekday ? dom : dom || dow
        if (dayOk) return t
      }
      throw new Error(`'${text}' never runs`)
    },
  }
}

function cronField(text: string, f: { name: string; min: number; max: number }): Set<number> {
  const out = new Set<number>()
  for (const item of text.split(',')) {
    const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item)
    if (!m) throw new Error(`cron ${f.name} '${item}' is not *, a number, a range or a step`)
    const lo = m[1] === '*' ? f.min : Number(m[2])
    const hi = m[1] === '*' ? f.max : m[3] !== undefined ? Number(m[3]) : m[4] ? f.max : lo
    const step = m[4] ? Number(m[4]) : 1
    if (lo < f.min || hi > f.max || lo > hi || step < 1)
      throw new Error(`cron ${f.name} '${item}' is outside ${f.min}-${f.max}`)
    for (let v = lo; v <= hi; v += step) out.add(v)
  }
  return out
}
