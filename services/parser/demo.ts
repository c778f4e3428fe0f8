import type { TransactionView } from '../../schema/analytics/views.ts'
import { Forbidden } from '../kernel/errors.ts'
import { centsOf, round2, toMajor } from '../kernel/money.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { DEFAULT_TIMEZONE, timeZone as zoneOf } from '../kernel/time-zone.ts'
import { demoCast } from './demo-cast.ts'

/**
 * What the parser stores as a demo row's `source`: demo rows are not metered (no
 * `mobilemoney.usage`), not checked against the plan and not counted by the next batch's check.
 * On the broker they travel as 'api', the way they came in (the event's source is a closed set).
 */
export const DEMO_SOURCE = 'demo'

/**
 * Whether a batch is demo data. Only the platform operator (`mmp demo seed`) may say so: a tenant
 * that could mark its own rows as demo would write past its plan for free.
 */
export function isDemoBatch(actor: Actor, demo: boolean | undefined): boolean {
  if (!demo) return false
  if (!isOperator(actor)) throw new Forbidden('only the platform operator may write demo data')
  return true
}

/**
 * A transaction as `POST /api/v1/parser/transactions` takes it (DESIGN §11): the fields the
 * analytics API reads back, a demo row always having its receipt and balance.
 */
export type DemoTransaction = Pick<
  TransactionView,
  | 'occurred_at'
  | 'amount'
  | 'direction'
  | 'counterparty_name'
  | 'counterparty_phone'
  | 'description'
> & { receipt_number: string; balance: number }

export interface DemoOptions {
  days: number
  seed?: number
  /** Last day (YYYY-MM-DD, tenant local) of the generated period. */
  end: string
  timeZone?: string
  /** Opening M-Pesa balance in KES. */
  openingBalance?: number
}

/** mulberry32: small, fast, deterministic. */
function prng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Monthly demand: December peak, January dip (school fees), mid-year steady. */
const SEASON = [0.8, 0.9, 1, 1, 0.95, 0.95, 1, 1.05, 1, 1, 1.1, 1.35]
/** Sunday..Saturday: Saturday busiest, Sunday quiet. */
const WEEKDAY = [0.55, 0.9, 0.95, 1, 1, 1.2, 1.45]

/**
 * A small Nairobi shop's M-Pesa year, deterministic for a seed: repeat customers (a few regulars
 * pay often), weekly and yearly seasonality, rent on the 1st, salaries on the last day of the
 * month, weekly supplier payments that follow sales, KPLC, water, internet, fuel, airtime and the
 * odd cash withdrawal. Pure: the same options give the same transactions, receipts included.
 *
 * @example
 * generateDemo({ days: 365, seed: 7, end: '2024-12-31' }).length // ≈ 12,000
 */
export function generateDemo(opts: DemoOptions): DemoTransaction[] {
  return generateDays(opts).map(({ daysBeforeEnd, ...t }) => t)
}

/** The demo that fits a plan: its newest whole days, and how many days that is. */
export interface FittedDemo {
  transactions: DemoTransaction[]
  days: number
}

/**
 * The newest whole days of `generateDemo(opts)` holding at most `room` transactions (all of them
 * when `room` is null). Rows are the same as the full demo's, receipts and balances included, so a
 * later run with more room adds the older days and finds the newer ones already there.
 *
 * @example
 * fitDemo({ days: 365, seed: 1, end: '2026-11-22' }, 10_000).days // 343 or so
 */
export function fitDemo(opts: DemoOptions, room: number | null): FittedDemo {
  const all = generateDays(opts)
  if (room === null || all.length <= room)
    return { transactions: generateDemo(opts), days: opts.days }
  const perDay = new Array<number>(opts.days).fill(0)
  for (const t of all) perDay[t.daysBeforeEnd]!++
  let days = 0
  let kept = 0
  while (days < opts.days && kept + perDay[days]! <= room) kept += perDay[days++]!
  return {
    transactions: all.filter((t) => t.daysBeforeEnd < days).map(({ daysBeforeEnd, ...t }) => t),
    days,
  }
}

function generateDays(opts: DemoOptions): Array<DemoTransaction & { daysBeforeEnd: number }> {
  const rnd = prng(opts.seed ?? 1)
  const tz = opts.timeZone ?? DEFAULT_TIMEZONE
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const phone = () => `2547${String(Math.floor(rnd() * 1e8)).padStart(8, '0')}`
  const ALPHA = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  const receipt = (year: number) =>
    `${String.fromCharCode(65 + ((year - 2010) % 26))}${Array.from({ length: 9 }, () => pick([...ALPHA])).join('')}`

  const { customer, staff } = demoCast(rnd, pick, phone)

  const out: Array<
    Omit<DemoTransaction, 'balance' | 'receipt_number'> & { year: number; daysBeforeEnd: number }
  > = []
  const [ey, em, ed] = opts.end.split('-').map(Number) as [number, number, number]
  const endUtc = Date.UTC(ey, em - 1, ed)
  let weekSales = 0
  for (let d = opts.days - 1; d >= 0; d--) {
    const day = new Date(endUtc - d * 86_400_000)
    const year = day.getUTCFullYear()
    const month = day.getUTCMonth() + 1
    const date = day.getUTCDate()
    const weekday = day.getUTCDay()
    const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate()
    const at = (hour: number, minute = Math.floor(rnd() * 60)) =>
      zoneOf(tz).localToUtc({
        year,
        month,
        day: date,
        hour,
        minute,
        second: Math.floor(rnd() * 60),
      })!
    const add = (
      hour: number,
      amount: number,
      direction: 'in' | 'out',
      description: string,
      name: string | null = null,
      phoneNo: string | null = null,
    ) =>
      out.push({
        occurred_at: at(hour),
        amount: round2(amount),
        direction,
        counterparty_name: name,
        counterparty_phone: phoneNo,
        description,
        year,
        daysBeforeEnd: d,
      })

    const demand = SEASON[month - 1]! * WEEKDAY[weekday]!
    const sales = Math.round(28 * demand * (0.8 + rnd() * 0.4))
    for (let i = 0; i < sales; i++) {
      const c = customer()
      const amount = Math.max(20, Math.round(c.basket * (0.5 + rnd())))
      weekSales += amount
      add(
        7 + Math.floor(rnd() * 14),
        amount,
        'in',
        `Funds received from ${c.phone} - ${c.name}`,
        c.name,
        c.phone,
      )
    }
    if (date === 1)
      add(
        9,
        35000,
        'out',
        'Pay Bill to 400200 - HASSCONSULT PROPERTIES Acc. SHOP 12',
        'HASSCONSULT PROPERTIES',
      )
    if (date === lastDay) {
      for (const s of staff) add(17, s.pay, 'out', `Salary - ${s.name}`, s.name, s.phone)
    }
    if (weekday === 1 && weekSales > 0) {
      const supplier = pick(['TWIGA FOODS', 'BIDCO AFRICA', 'WASOKO', 'BROOKSIDE DAIRY'])
      add(
        10,
        Math.round(weekSales * (0.62 + rnd() * 0.1)),
        'out',
        `Pay Bill to 522522 - ${supplier} Acc. ORD${Math.floor(rnd() * 9000 + 1000)}`,
        supplier,
      )
      weekSales = 0
    }
    if (date === 15)
      add(
        11,
        2500 + Math.round(rnd() * 2500),
        'out',
        `Pay Bill to 888880 - KPLC PREPAID Acc. 54321678${Math.floor(rnd() * 10)}`,
        'KPLC PREPAID',
      )
    if (date === 10)
      add(
        11,
        800 + Math.round(rnd() * 700),
        'out',
        'Pay Bill to 444400 - NAIROBI WATER Acc. 3021456',
        'NAIROBI WATER',
      )
    if (date === 5) add(12, 2999, 'out', 'Pay Bill to 320320 - ZUKU Acc. 998877', 'ZUKU')
    if (weekday === 2 || weekday === 5) {
      const station = pick(['SHELL KAREN', 'TOTALENERGIES THIKA RD', 'RUBIS NGONG RD'])
      add(
        8,
        2000 + Math.round(rnd() * 3000),
        'out',
        `Merchant Payment to 123456 - ${station}`,
        station,
      )
    }
    if (weekday === 3) add(9, pick([100, 200, 250, 500]), 'out', 'Airtime Purchase', 'Safaricom')
    if (rnd() < 0.08)
      add(
        18,
        1000 * (1 + Math.floor(rnd() * 10)),
        'out',
        'Customer Withdrawal At Agent Till 556677 - JANE AGENCIES SHOP 4',
        'JANE AGENCIES SHOP 4',
      )
  }
  out.sort((a, b) => (a.occurred_at < b.occurred_at ? -1 : a.occurred_at > b.occurred_at ? 1 : 0))
  let balance = centsOf(opts.openingBalance ?? 50000)
  return out.map(({ year, ...t }) => {
    balance += (t.direction === 'in' ? 1 : -1) * centsOf(t.amount)
    return { ...t, receipt_number: receipt(year), balance: toMajor(balance) }
  })
}
