import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { DEFAULT_TIMEZONE, dayFromNumber, dayIn, dayNumber } from './days.ts'

/** A zero-filled daily series in cents, one entry per calendar day from `from` to `to`. */
export interface DailySeries {
  from: string
  to: string
  days: string[]
  inflow: number[]
  outflow: number[]
}

export interface CategoryDay {
  day: string
  category: string
  inflow: number
  outflow: number
}

export function timeZoneOf(ctx: ServiceContext, tenantId: string): string {
  return ctx.registry.placement(tenantId).timezone ?? DEFAULT_TIMEZONE
}

export function todayOf(ctx: ServiceContext, tenantId: string): string {
  return dayIn(timeZoneOf(ctx, tenantId), ctx.clock.now())
}

/** First and last day with any transaction, or null for a tenant without data. */
export function seriesBounds(db: Db, tenantId: string): { first: string; last: string } | null {
  const row = db.sqlite
    .query<{ first: string | null; last: string | null }, [string]>(
      'SELECT min(day) AS first, max(day) AS last FROM cashflow_daily WHERE tenant_id = ?',
    )
    .get(tenantId)
  return row?.first && row.last ? { first: row.first, last: row.last } : null
}

export function loadDailySeries(db: Db, tenantId: string, from: string, to: string): DailySeries {
  const start = dayNumber(from)
  const length = Math.max(0, dayNumber(to) - start + 1)
  const days = new Array<string>(length)
  for (let i = 0; i < length; i++) days[i] = dayFromNumber(start + i)
  const inflow = new Array<number>(length).fill(0)
  const outflow = new Array<number>(length).fill(0)
  const rows = db.sqlite
    .query<{ day: string; inflow: number; outflow: number }, [string, string, string]>(
      `SELECT day, sum(inflow) AS inflow, sum(outflow) AS outflow FROM cashflow_daily
       WHERE tenant_id = ? AND day BETWEEN ? AND ? GROUP BY day`,
    )
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

export function loadCategoryDays(
  db: Db,
  tenantId: string,
  from: string,
  to: string,
): CategoryDay[] {
  return db.sqlite
    .query<CategoryDay, [string, string, string]>(
      `SELECT day, category, inflow, outflow FROM cashflow_daily
       WHERE tenant_id = ? AND day BETWEEN ? AND ? ORDER BY day, category`,
    )
    .all(tenantId, from, to)
}

export function netOf(series: DailySeries): number[] {
  return series.inflow.map((v, i) => v - series.outflow[i]!)
}
