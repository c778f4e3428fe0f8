import { toMajor } from '../kernel/money.ts'
import type { Insight } from './insight-rules.ts'
import { dayText, money } from './insight-words.ts'
import type { DayCell } from './summary.ts'

/**
 * Days whose volume (in + out) is far from the usual: robust z-score from the median and the
 * median absolute deviation over the last 90 days, flagged above 3.5. Needs 14 active days.
 */
export function unusualDays(cells: readonly DayCell[]): Insight | null {
  const perDay = new Map<string, number>()
  for (const c of cells) perDay.set(c.day, (perDay.get(c.day) ?? 0) + c.cents)
  if (perDay.size < 14) return null
  const values = [...perDay.values()]
  const med = median(values)
  const mad = median(values.map((v) => Math.abs(v - med)))
  if (mad === 0) return null
  const flagged = [...perDay.entries()]
    .map(([day, cents]) => ({ day, cents, z: (0.6745 * (cents - med)) / mad }))
    .filter((d) => Math.abs(d.z) > 3.5)
    .sort((a, b) => Math.abs(b.z) - Math.abs(a.z))
  if (flagged.length === 0) return null
  const first = flagged[0]!
  return {
    type: 'unusual_days',
    title: `${flagged.length} unusual day${flagged.length === 1 ? '' : 's'}`,
    message: `On ${dayText(first.day)} ${money(first.cents)} moved through your account, against a typical ${money(med)} a day.`,
    numbers: {
      period_days: 90,
      typical_daily_volume: toMajor(med),
      days: flagged.slice(0, 10).map((d) => ({
        date: d.day,
        volume: toMajor(d.cents),
        robust_z: Math.round(d.z * 100) / 100,
      })),
    },
  }
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
