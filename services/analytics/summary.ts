import { dailySummaries, dailyTotals } from '../../schema/analytics/tables.ts'
import type { SummaryTotals } from '../../schema/analytics/views.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { toMajor } from '../kernel/money.ts'
import { type TimeZone, weekOf } from '../kernel/time-zone.ts'
import { addToKind, type Figures, figuresOf, type KindTotals } from './figures.ts'
import { type DaySplit, type Range, splitRange } from './range.ts'
import { roleOf, UNCATEGORIZED } from './stored.ts'
import { tx } from './stored-sql.ts'

/** Who and when a read covers: the tenant, optionally one user (`scope=me`), and a range. */
export interface Scope {
  db: Db
  tenantId: string
  userId: string | null
  zone: TimeZone
  range: Range
}

/** One rollup cell: a local day, direction, category and kind with its count and cents. */
export type DayCell = Pick<typeof dailyTotals.$inferSelect, 'day' | 'category' | 'kind'> & {
  direction: 'in' | 'out'
  count: number
  cents: number
}

/**
 * Reads rollup cells for a scope: whole days from `daily_totals`, partial edge days (a date-time
 * `from`/`to` inside a day) from the transactions time index. O(days) plus the edge rows.
 */
export function readCells(scope: Scope, opts: { byCategory?: boolean } = {}): DayCell[] {
  const split = splitRange(scope.zone, scope.range)
  const cells = opts.byCategory ? readCategoryDays(scope, split) : readDays(scope, split)
  for (const edge of split.edges) cells.push(...readEdge(scope, edge))
  return cells
}

const ds = sqlNames(dailySummaries)
const dt = sqlNames(dailyTotals)

/**
 * The WHERE of a rollup read over whole days: both rollups name their tenant, day and user
 * columns alike (`names` is either's).
 */
function dayWhere(
  scope: Scope,
  split: DaySplit,
  names: Pick<typeof ds | typeof dt, 'tenantId' | 'day' | 'userId'>,
) {
  const where = [`${names.tenantId} = ?`]
  const args: (string | number)[] = [scope.tenantId]
  if (split.fromDay) where.push(`${names.day} >= ?`) && args.push(split.fromDay)
  if (split.toDay) where.push(`${names.day} <= ?`) && args.push(split.toDay)
  if (scope.userId !== null) where.push(`${names.userId} = ?`) && args.push(scope.userId)
  return { sql: where.join(' AND '), args }
}

/** A day cell's sums, read as values: count and cents in, count and cents out. */
const DAY_SUMS = `sum(${ds.inCount}), sum(${ds.inCents}), sum(${ds.outCount}), sum(${ds.outCents})`

const emptySplit = (s: DaySplit) => !!(s.fromDay && s.toDay && s.fromDay > s.toDay)

/** Whole days from the (day, user, kind) rollup: two cells a day and kind, category '*'. */
function readDays(scope: Scope, split: DaySplit): DayCell[] {
  if (emptySplit(split)) return []
  const { sql, args } = dayWhere(scope, split, ds)
  const rows = scope.db.sqlite
    .query(
      `SELECT ${ds.day}, ${ds.kind}, ${DAY_SUMS} FROM ${ds.$} WHERE ${sql}
       GROUP BY ${ds.day}, ${ds.kind}`,
    )
    .values(...args) as Array<[string, string, number, number, number, number]>
  const cells: DayCell[] = []
  for (const [day, kind, ic, ia, oc, oa] of rows) {
    if (ic > 0) cells.push({ day, direction: 'in', category: '*', kind, count: ic, cents: ia })
    if (oc > 0) cells.push({ day, direction: 'out', category: '*', kind, count: oc, cents: oa })
  }
  return cells
}

function readCategoryDays(scope: Scope, split: DaySplit): DayCell[] {
  if (emptySplit(split)) return []
  const { sql, args } = dayWhere(scope, split, dt)
  const cell = `${dt.day}, ${dt.direction}, ${dt.category}, ${dt.kind}`
  return scope.db.sqlite
    .query(
      `SELECT ${selectList(dailyTotals, ['day', 'direction', 'category', 'kind'])},
         sum(${dt.txCount}) AS count, sum(${dt.amountCents}) AS cents
       FROM ${dt.$} WHERE ${sql} GROUP BY ${cell}`,
    )
    .all(...args) as DayCell[]
}

const category = `coalesce(${tx.category}, '${UNCATEGORIZED}')`
const kind = `coalesce(${tx.kind}, '')`
/** An edge day's cells from the rows through the time index (DayCell's fields). */
const EDGE_SQL = `SELECT ${tx.localDay} AS day, ${tx.direction} AS direction,
    ${category} AS category, ${kind} AS kind, count(*) AS count, sum(${tx.amountCents}) AS cents
  FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.occurredAt} >= ? AND ${tx.occurredAt} < ?`
const EDGE_GROUP = `GROUP BY ${tx.localDay}, ${tx.direction}, ${category}, ${kind}`
const EDGE_MINE_SQL = `${EDGE_SQL} AND ${tx.userId} = ? ${EDGE_GROUP}`
const EDGE_ALL_SQL = `${EDGE_SQL} ${EDGE_GROUP}`

function readEdge(scope: Scope, edge: { fromMs: number; toMs: number }): DayCell[] {
  const args: string[] = [
    scope.tenantId,
    new Date(edge.fromMs).toISOString(),
    new Date(edge.toMs).toISOString(),
  ]
  if (scope.userId !== null) args.push(scope.userId)
  return scope.db.sqlite
    .query(scope.userId === null ? EDGE_ALL_SQL : EDGE_MINE_SQL)
    .all(...args) as DayCell[]
}

/**
 * SPEC's four figures, money in and out, and what the money was (figures.ts): `revenue`,
 * `expenses`, `net` (revenue − expenses), `balance_change` (in − out) and `by_kind`.
 */
export interface Summary extends Figures, SummaryTotals {}

/**
 * The summary of a scope: whole days aggregated inside SQLite over the (day, user, kind) rollup,
 * one row a kind back; partial edge days added from the time index. Edge days never repeat a
 * whole day.
 */
export function summaryOf(scope: Scope): Summary {
  const split = splitRange(scope.zone, scope.range)
  const totals: Totals = { kinds: new Map(), days: 0 }
  if (!emptySplit(split)) {
    const { sql, args } = dayWhere(scope, split, ds)
    const sqlite = scope.db.sqlite
    const rows = sqlite
      .query(`SELECT ${ds.kind}, ${DAY_SUMS} FROM ${ds.$} WHERE ${sql} GROUP BY ${ds.kind}`)
      .values(...args) as Array<[string, number, number, number, number]>
    for (const [kind, ic, ia, oc, oa] of rows) {
      addToKind(totals.kinds, { kind, direction: 'in', count: ic, cents: ia })
      addToKind(totals.kinds, { kind, direction: 'out', count: oc, cents: oa })
    }
    const days = sqlite
      .query(`SELECT count(DISTINCT ${ds.day}) FROM ${ds.$} WHERE ${sql}`)
      .values(...args)[0]?.[0] as number | null
    totals.days = days ?? 0
  }
  if (split.edges.length === 0) return summaryFrom(totals)
  const edges = split.edges.flatMap((e) => readEdge(scope, e))
  addCells(totals, edges)
  return summaryFrom(totals)
}

interface Totals {
  kinds: KindTotals
  days: number
}

/** Adds cells to the totals; their days are days the totals did not count. */
function addCells(t: Totals, cells: readonly DayCell[]): void {
  const days = new Set<string>()
  for (const c of cells) {
    if (c.count <= 0) continue
    addToKind(t.kinds, { kind: c.kind, direction: c.direction, count: c.count, cents: c.cents })
    days.add(c.day)
  }
  t.days += days.size
}

export function summarize(cells: readonly DayCell[]): Summary {
  const totals: Totals = { kinds: new Map(), days: 0 }
  addCells(totals, cells)
  return summaryFrom(totals)
}

function summaryFrom({ kinds, days }: Totals): Summary {
  let count = 0
  let inCents = 0
  let outCents = 0
  for (const k of kinds.values()) {
    count += k.inCount + k.outCount
    inCents += k.inCents
    outCents += k.outCents
  }
  const total = inCents + outCents
  return {
    total_transactions: count,
    total_amount: toMajor(total),
    average_transaction: count === 0 ? 0 : Math.round(total / count) / 100,
    active_days: days,
    total_in: toMajor(inCents),
    total_out: toMajor(outCents),
    ...figuresOf(kinds),
  }
}

export type Interval = 'day' | 'week' | 'month'

/** A period's money in and out, and its revenue, expenses and net as the summary counts them. */
export interface TrendPoint {
  period: string
  start: string
  transactions: number
  total_in: number
  total_out: number
  revenue: number
  expenses: number
  net: number
}

interface Bucket {
  start: string
  count: number
  inC: number
  outC: number
  revenue: number
  expenses: number
}

/** Buckets rollup cells by day, ISO week (Monday) or calendar month, oldest first. */
export function trendOf(cells: readonly DayCell[], interval: Interval): TrendPoint[] {
  const buckets = new Map<string, Bucket>()
  for (const c of cells) {
    if (c.count <= 0) continue
    const start =
      interval === 'day' ? c.day : interval === 'week' ? weekOf(c.day) : `${c.day.slice(0, 7)}-01`
    const period = interval === 'month' ? c.day.slice(0, 7) : start
    let b = buckets.get(period)
    if (!b) {
      b = { start, count: 0, inC: 0, outC: 0, revenue: 0, expenses: 0 }
      buckets.set(period, b)
    }
    b.count += c.count
    const signed = c.direction === 'in' ? c.cents : -c.cents
    if (c.direction === 'in') b.inC += c.cents
    else b.outC += c.cents
    const role = roleOf(c.kind)
    if (role === 'revenue') b.revenue += signed
    else if (role === 'expense') b.expenses -= signed
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([period, b]) => ({
      period,
      start: b.start,
      transactions: b.count,
      total_in: toMajor(b.inC),
      total_out: toMajor(b.outC),
      revenue: toMajor(b.revenue),
      expenses: toMajor(b.expenses),
      net: toMajor(b.revenue - b.expenses),
    }))
}
