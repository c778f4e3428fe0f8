import { toMajor } from '../kernel/money.ts'
import { addDays } from '../kernel/time-zone.ts'
import { counterpartyTotals, moneyInSince, segmentSizes } from './customers.ts'
import { customersActive } from './groups.ts'
import { money, pct, pctText } from './insight-words.ts'
import { roleOf } from './stored.ts'
import type { DayCell, Scope } from './summary.ts'

/** One insight: a sentence with its title and the numbers behind it. */
export interface Insight {
  type: string
  title: string
  message: string
  numbers: Record<string, unknown>
}

/**
 * The days one set of insights reads: windows ending `today`, or the given period; the recent
 * day cells by category; and the words and bounds of a window of `days` days.
 */
export interface InsightWindow {
  scope: Scope
  today: string
  period: { from: string; to: string } | null
  spanDays: number
  firstDay: string | null
  recent: DayCell[]
  /** "from … to …" or "in the N days to …". */
  ending: (days: number) => string
  /** The first day of the window of `days` days (the whole period when one is given). */
  startOf: (days: number) => string
}

// Revenue as the summary counts it: customer payments, never a loan drawn or savings withdrawn.
function revenueOf(cells: DayCell[], from: string, to: string) {
  let cents = 0
  for (const c of cells) {
    if (c.day < from || c.day > to || roleOf(c.kind) !== 'revenue') continue
    cents += c.direction === 'in' ? c.cents : -c.cents
  }
  return cents
}

const daysOf = (w: InsightWindow, days: number) => (w.period ? w.spanDays : days)

/** Revenue of the week and month (or the period) against as many days before. */
export function revenueChange(w: InsightWindow): Insight[] {
  const { period, spanDays, today, recent, firstDay, ending } = w
  const out: Insight[] = []
  const windows: ReadonlyArray<readonly [string, string, number]> = period
    ? [['revenue_change', 'period', spanDays]]
    : [
        ['revenue_change_wow', 'week', 7],
        ['revenue_change_mom', 'month', 30],
      ]
  for (const [type, label, days] of windows) {
    const current = revenueOf(recent, addDays(today, 1 - days), today)
    const before = addDays(today, 1 - 2 * days)
    const previous = revenueOf(recent, before, addDays(today, -days))
    // Nothing in either window says nothing: no insight rather than "up" from 0 to 0.
    if (current === 0 && previous === 0) continue
    // Compared only when the data reaches back to the start of the earlier window.
    const covered = firstDay !== null && firstDay <= before
    const change = current - previous
    const changePct = !covered || previous === 0 ? null : pct(change, previous)
    const than = `the ${days} days before`
    out.push({
      type,
      title:
        changePct === null
          ? `Revenue this ${label}`
          : change === 0
            ? `Revenue flat ${label} over ${label}`
            : `Revenue ${change > 0 ? 'up' : 'down'} ${label} over ${label}`,
      message:
        changePct === null
          ? `Customers paid you ${money(current)} ${ending(days)}; there is not enough history to compare it with ${than}.`
          : `Customers paid you ${money(current)} ${ending(days)}, ${pctText(Math.abs(changePct))} ${change >= 0 ? 'more' : 'less'} than ${than} (${money(previous)}).`,
      numbers: {
        period_days: days,
        current: toMajor(current),
        previous: covered ? toMajor(previous) : null,
        change: covered ? toMajor(change) : null,
        change_pct: changePct,
        compared: covered,
      },
    })
  }

  return out
}

/** How much of the revenue the top five customers bring. */
export function customerConcentration(w: InsightWindow): Insight[] {
  const { scope, period, today, ending, startOf } = w
  const out: Insight[] = []
  const rangeOf = (days: number) => ({
    fromMs: scope.zone.startOf(startOf(days)),
    toMs: period ? scope.zone.startOf(addDays(today, 1)) : null,
  })
  // Tenant-wide reads come from the rollups (customers.ts); scope=me sums the caller's own rows.
  const moneyIn90 = (
    scope.userId === null && !period
      ? [...moneyInSince(scope.db, scope.tenantId, startOf(90)).values()]
      : counterpartyTotals({ ...scope, range: rangeOf(90) }).map((c) => c.in_cents)
  ).filter((cents) => cents > 0)
  const revenue90 = moneyIn90.reduce((s, cents) => s + cents, 0)
  if (moneyIn90.length > 0 && revenue90 > 0) {
    const top = moneyIn90.sort((a, b) => b - a).slice(0, 5)
    const topCents = top.reduce((s, cents) => s + cents, 0)
    const share = pct(topCents, revenue90)
    out.push({
      type: 'customer_concentration',
      title:
        share >= 50 ? 'Revenue depends on a few customers' : 'Revenue is spread across customers',
      message: `Your top ${top.length} customers brought ${pctText(share)} of your revenue ${ending(90)} (${money(topCents)} of ${money(revenue90)}).`,
      numbers: {
        period_days: daysOf(w, 90),
        top_customers: top.length,
        top_revenue: toMajor(topCents),
        total_revenue: toMajor(revenue90),
        top_share_pct: share,
        customers: moneyIn90.length,
      },
    })
  }

  return out
}

/** Customers who paid for the first time in the last 30 days (or the period), and those back. */
export function newAndReturning(w: InsightWindow): Insight[] {
  const { scope, today, ending, startOf } = w
  const out: Insight[] = []
  // Customers only: suppliers, staff, the landlord, agents and lenders are not customers.
  const { active, fresh } = customersActive(scope, startOf(30), today)
  if (active > 0) {
    const back = active - fresh
    out.push({
      type: 'new_vs_returning_customers',
      title: `${fresh} new and ${back} returning customers`,
      message: `${fresh.toLocaleString('en-KE')} customer${fresh === 1 ? '' : 's'} paid you for the first time ${ending(30)}, and ${back.toLocaleString('en-KE')} who had paid before came back.`,
      numbers: {
        period_days: daysOf(w, 30),
        new: fresh,
        returning: back,
        new_share_pct: pct(fresh, active),
      },
    })
  }

  return out
}

/** The categories that took most of the spending. */
export function largestExpenses(w: InsightWindow): Insight[] {
  const { recent, ending, startOf } = w
  const out: Insight[] = []
  // Spending by category: money out that was spent (supplier and bill payments, charges,
  // airtime), never a loan repaid, savings put away or a transfer to the owner's own account.
  const from30 = startOf(30)
  const expenses = new Map<string, number>()
  for (const c of recent) {
    if (c.direction === 'out' && c.day >= from30 && roleOf(c.kind) === 'expense') {
      expenses.set(c.category, (expenses.get(c.category) ?? 0) + c.cents)
    }
  }
  const totalOut = [...expenses.values()].reduce((s, v) => s + v, 0)
  if (totalOut > 0) {
    const top = [...expenses.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3)
    out.push({
      type: 'largest_expense_categories',
      title: `Largest expense: ${top[0]![0]}`,
      message: `${top[0]![0]} took ${pctText(pct(top[0]![1], totalOut))} of your spending ${ending(30)} (${money(top[0]![1])} of ${money(totalOut)}).`,
      numbers: {
        period_days: daysOf(w, 30),
        total_expenses: toMajor(totalOut),
        categories: top.map(([category, cents]) => ({
          category,
          amount: toMajor(cents),
          share_pct: pct(cents, totalOut),
        })),
      },
    })
  }

  return out
}

/** Valuable customers slipping away and champions (RFM segments, advanced analytics). */
export function segmentInsights(scope: Scope, nowMs: number): Insight[] {
  const out: Insight[] = []
  const segments = segmentSizes(scope, nowMs)
  const atRisk = segments.find((s) => s.segment === 'at_risk')!
  const champions = segments.find((s) => s.segment === 'champions')!
  if (atRisk.customers > 0) {
    out.push({
      type: 'customers_at_risk',
      title: `${atRisk.customers} valuable customers are slipping away`,
      message: `${atRisk.customers.toLocaleString('en-KE')} customers who used to come often have not been seen for a while; together they were worth ${money(Math.round(atRisk.total * 100))}.`,
      numbers: {
        customers: atRisk.customers,
        total: atRisk.total,
        share_of_value: atRisk.share_of_value,
      },
    })
  }
  if (champions.customers > 0) {
    out.push({
      type: 'champion_customers',
      title: `${champions.customers} champion customers`,
      message: `${champions.customers.toLocaleString('en-KE')} recent, frequent customers hold ${pctText(champions.share_of_value)} of your transaction value.`,
      numbers: {
        customers: champions.customers,
        total: champions.total,
        share_of_value: champions.share_of_value,
      },
    })
  }
  return out
}
