import { toMajor } from '../kernel/money.ts'
import { counterpartyTotals, moneyInSince, segmentSizes } from './customers.ts'
import { customersActive } from './groups.ts'
import { dayText, money, pct, pctText } from './insight-words.ts'
import { roleOf } from './stored.ts'
import { type DayCell, readCells, type Scope } from './summary.ts'
import { addDays, daysBetween } from './time.ts'
import { unusualDays } from './unusual-days.ts'

export interface Insight {
  type: string
  title: string
  message: string
  numbers: Record<string, unknown>
}

/** The last local day with a transaction in scope, or null without any. */
export function lastDataDay(scope: Scope): string | null {
  const row =
    scope.userId === null
      ? scope.db.sqlite
          .query<{ day: string | null }, [string]>(
            'SELECT max(day) AS day FROM daily_totals WHERE tenant_id = ?',
          )
          .get(scope.tenantId)
      : scope.db.sqlite
          .query<{ day: string | null }, [string, string]>(
            'SELECT max(day) AS day FROM daily_totals WHERE tenant_id = ? AND user_id = ?',
          )
          .get(scope.tenantId, scope.userId)
  return row?.day ?? null
}

/** A period of whole local days, `from` and `to` included. */
export interface DayPeriod {
  from: string
  to: string
}

/**
 * Rule-based insights, each one sentence with the numbers behind it. Periods are whole local days
 * (the tenant's time zone) ending at `as_of`: today, or the last day with data when that is older
 * (a statement imported a week after it ended is not a week without revenue). Without a period, a
 * week is the last 7 days against the 7 before and a month the last 30 against the 30 before;
 * with one, the period is compared with as many days just before it. A comparison is made only
 * when the data reaches back to the start of the earlier window: a month against a window holding
 * three days of data would say "up 995%". RFM-based insights only when `advanced` is on.
 */
export function buildInsights(
  scope: Scope,
  nowMs: number,
  advanced: boolean,
  period: DayPeriod | null = null,
): { as_of: string; data: Insight[] } {
  const last = lastDataDay(scope)
  const todayHere = scope.zone.dayOf(nowMs)
  const today = period?.to ?? (last && last < todayHere ? last : todayHere)
  return { as_of: today, data: insightsUpTo(scope, today, nowMs, advanced, period) }
}

/** The first local day with a transaction in scope, or null without any. */
function firstDataDay(scope: Scope): string | null {
  const row = scope.db.sqlite
    .query<{ day: string | null }, string[]>(
      scope.userId === null
        ? 'SELECT min(day) AS day FROM daily_totals WHERE tenant_id = ?'
        : 'SELECT min(local_day) AS day FROM transactions WHERE tenant_id = ? AND user_id = ?',
    )
    .get(...(scope.userId === null ? [scope.tenantId] : [scope.tenantId, scope.userId]))
  return row?.day ?? null
}

function insightsUpTo(
  scope: Scope,
  today: string,
  nowMs: number,
  advanced: boolean,
  period: DayPeriod | null,
): Insight[] {
  const spanDays = period ? daysBetween(period.from, period.to) + 1 : 0
  const ending = (days: number) =>
    period
      ? `from ${dayText(period.from)} to ${dayText(period.to)}`
      : `in the ${days} days to ${dayText(today)}`
  /** The first day of the window of `days` days (the whole period when one is given). */
  const startOf = (days: number) => (period ? period.from : addDays(today, 1 - days))
  const cellsFor = (fromDay: string, toDay: string) =>
    readCells(
      {
        ...scope,
        range: {
          fromMs: scope.zone.startOf(fromDay),
          toMs: scope.zone.startOf(addDays(toDay, 1)),
        },
      },
      { byCategory: true },
    )
  const firstDay = firstDataDay(scope)
  const reach = Math.max(90, 2 * spanDays)
  const recent = cellsFor(addDays(today, 1 - reach), today)
  // Revenue as the summary counts it: customer payments, never a loan drawn or savings withdrawn.
  const revenueOf = (cells: DayCell[], from: string, to: string) => {
    let cents = 0
    for (const c of cells) {
      if (c.day < from || c.day > to || roleOf(c.kind) !== 'revenue') continue
      cents += c.direction === 'in' ? c.cents : -c.cents
    }
    return cents
  }
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

  const daysOf = (days: number) => (period ? spanDays : days)
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
        period_days: daysOf(90),
        top_customers: top.length,
        top_revenue: toMajor(topCents),
        total_revenue: toMajor(revenue90),
        top_share_pct: share,
        customers: moneyIn90.length,
      },
    })
  }

  // Customers only: suppliers, staff, the landlord, agents and lenders are not customers.
  const { active, fresh } = customersActive(scope, startOf(30), today)
  if (active > 0) {
    const back = active - fresh
    out.push({
      type: 'new_vs_returning_customers',
      title: `${fresh} new and ${back} returning customers`,
      message: `${fresh.toLocaleString('en-KE')} customer${fresh === 1 ? '' : 's'} paid you for the first time ${ending(30)}, and ${back.toLocaleString('en-KE')} who had paid before came back.`,
      numbers: {
        period_days: daysOf(30),
        new: fresh,
        returning: back,
        new_share_pct: pct(fresh, active),
      },
    })
  }

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
        period_days: daysOf(30),
        total_expenses: toMajor(totalOut),
        categories: top.map(([category, cents]) => ({
          category,
          amount: toMajor(cents),
          share_pct: pct(cents, totalOut),
        })),
      },
    })
  }

  const from90 = startOf(90)
  const unusual = unusualDays(recent.filter((c) => c.day >= from90))
  if (unusual) out.push(unusual)

  if (advanced) {
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
  }
  return out
}
