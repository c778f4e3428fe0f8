import { toMajor } from '../kernel/money.ts'

/** Figures as insight sentences write them. */
const grouped = new Intl.NumberFormat('en-KE', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
})
/** The dashboard's one money format, `KES 1,234.00` (en-KE grouping, the sign first), of shillings. */
export const kes = (n: number) => `KES ${n < 0 ? '-' : ''}${grouped.format(Math.abs(n))}`
/** The same, of cents, for sentences people read. */
export const money = (cents: number) => kes(toMajor(cents))
export const pct = (x: number, of: number) => (of === 0 ? 0 : Math.round((10_000 * x) / of) / 100)
export const pctText = (p: number) => `${p.toLocaleString('en-KE', { maximumFractionDigits: 1 })}%`
const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ')
/** `2026-11-22` (or an ISO time) as people write the day: `22 Nov 2026`. */
export const dayText = (day: string) =>
  `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`
