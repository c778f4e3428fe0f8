import { and, eq, gte, max, min } from 'drizzle-orm'
import { cashflowDaily } from '../../schema/cashflow/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { DEFAULT_TIMEZONE, dayFromNumber, dayIn, dayNumber } from '../kernel/time-zone.ts'
import { GROUP_OF, operatingSql } from './kinds.ts'

/**
 * Which movements a series counts: `operating` what was earned and spent (the default: health,
 * burn, runway, trends and forecasts), `all` every movement, the one the balance follows.
 */
export type Scope = 'operating' | 'all'

type DailyRow = typeof cashflowDaily.$inferSelect

/**
 * The daily series' aggregations, hand-written (GROUP BY over the forecast's measured path,
 * bench/cashflow.ts) with every name taken from the table.
 */
const d = sqlNames(cashflowDaily)
const OPERATING = operatingSql(d.kind)
const IN_RANGE = `${d.tenantId} = ? AND ${d.day} BETWEEN ? AND ?`
const FLOWS = `sum(${d.inflow}) AS inflow, sum(${d.outflow}) AS outflow`
const DAILY_SQL: Record<Scope, string> = {
  all: `SELECT ${d.day} AS day, ${FLOWS} FROM ${d.$} WHERE ${IN_RANGE} GROUP BY ${d.day}`,
  operating: `SELECT ${d.day} AS day, ${FLOWS} FROM ${d.$} WHERE ${IN_RANGE} AND ${OPERATING}
    GROUP BY ${d.day}`,
}
const CATEGORY_DAYS = `SELECT ${d.day} AS day, ${d.category} AS category, ${FLOWS} FROM ${d.$}
  WHERE ${IN_RANGE} AND ${OPERATING} GROUP BY ${d.day}, ${d.category} ORDER BY ${d.day}, ${d.category}`
const KIND_DAYS = `SELECT ${d.day} AS day, ${d.kind} AS kind, ${FLOWS}, sum(${d.count}) AS count
  FROM ${d.$} WHERE ${IN_RANGE} AND NOT (${OPERATING}) GROUP BY ${d.day}, ${d.kind}
  ORDER BY ${d.day}, ${d.kind}`

/** A zero-filled daily series in cents, one entry per calendar day from `from` to `to`. */
export interface DailySeries {
  from: string
  to: string
  days: string[]
  inflow: number[]
  outflow: number[]
}

export type CategoryDay = Pick<DailyRow, 'day' | 'category' | 'inflow' | 'outflow'>

export function timeZoneOf(ctx: ServiceContext, tenantId: string): string {
  return ctx.registry.placement(tenantId).timezone ?? DEFAULT_TIMEZONE
}

export function todayOf(ctx: ServiceContext, tenantId: string): string {
  return dayIn(timeZoneOf(ctx, tenantId), ctx.clock.now())
}

/**
 * First and last day with any transaction, or null for a tenant without data. Days before 2007
 * (stored before the doors refused them) are not part of any series.
 */
export function seriesBounds(db: Db, tenantId: string): { first: string; last: string } | null {
  const t = cashflowDaily
  const row = db.orm
    .select({ first: min(t.day), last: max(t.day) })
    .from(t)
    .where(and(eq(t.tenantId, tenantId), gte(t.day, '2007-01-01')))
    .get()
  return row?.first && row.last ? { first: row.first, last: row.last } : null
}

export function loadDailySeries(
  db: Db,
  {
    tenantId,
    from,
    to,
    scope = 'operating',
  }: { tenantId: string; from: string; to: string; scope?: Scope },
): DailySeries {
  const start = dayNumber(from)
  const length = Math.max(0, dayNumber(to) - start + 1)
  const days = new Array<string>(length)
  for (let i = 0; i < length; i++) days[i] = dayFromNumber(start + i)
  const inflow = new Array<number>(length).fill(0)
  const outflow = new Array<number>(length).fill(0)
  const rows = db.sqlite
    .query<Pick<DailyRow, 'day' | 'inflow' | 'outflow'>, [string, string, string]>(DAILY_SQL[scope])
    .all(tenantId, from, to)
  for (const r of rows) {
    const i = dayNumber(r.day) - start
    if (i >= 0 && i < length) {
      inflow[i] = r.inflow
      outflow[i] = r.outflow
    }
  }
  return { from, to, days, inflow, outflow }
}

/** Operating flows by day and category. */
export function loadCategoryDays(
  db: Db,
  { tenantId, from, to }: { tenantId: string; from: string; to: string },
): CategoryDay[] {
  return db.sqlite
    .query<CategoryDay, [string, string, string]>(CATEGORY_DAYS)
    .all(tenantId, from, to)
}

export type KindDay = Pick<DailyRow, 'day' | 'kind' | 'inflow' | 'outflow' | 'count'>

/** Movements that are neither earned nor spent (loans, savings, transfers…) by day and kind. */
export function loadBalanceKindDays(
  db: Db,
  { tenantId, from, to }: { tenantId: string; from: string; to: string },
): KindDay[] {
  return db.sqlite.query<KindDay, [string, string, string]>(KIND_DAYS).all(tenantId, from, to)
}

/** Totals of one line (financing or transfers), each kind on it and all of them, in cents. */
export interface KindTotals {
  inflow: number
  outflow: number
  kinds: Record<string, { inflow: number; outflow: number; count: number }>
}

/** The balance-only movements of `from`..`to` on their lines: financing and transfers. */
export function loadBalanceLines(
  db: Db,
  { tenantId, from, to }: { tenantId: string; from: string; to: string },
): Record<'financing' | 'transfers', KindTotals> {
  const lines = {
    financing: { inflow: 0, outflow: 0, kinds: {} } as KindTotals,
    transfers: { inflow: 0, outflow: 0, kinds: {} } as KindTotals,
  }
  for (const row of loadBalanceKindDays(db, { tenantId, from, to })) {
    const line = lines[GROUP_OF[row.kind as keyof typeof GROUP_OF] ?? 'transfers']
    const k = line.kinds[row.kind] ?? { inflow: 0, outflow: 0, count: 0 }
    line.kinds[row.kind] = k
    k.inflow += row.inflow
    k.outflow += row.outflow
    k.count += row.count
    line.inflow += row.inflow
    line.outflow += row.outflow
  }
  return lines
}

export function netOf(series: DailySeries): number[] {
  return series.inflow.map((v, i) => v - series.outflow[i]!)
}
