import type { StatementProcessedEvent, TransactionEvent } from '../../schema/events.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { invalidField } from '../kernel/errors.ts'
import { handleOnce } from '../kernel/events.ts'
import { centsOf, toMajor, toMinor } from '../kernel/money.ts'
import { addDays, daysBetween, isDay } from '../kernel/time-zone.ts'
import { evaluateLowBalance, readState, setThreshold } from './alerts.ts'
import { type AnalyzeOptions, analyzeCashflow } from './analyze.ts'
import { readDataQuality, recordStatementProof } from './data-quality.ts'
import { forecastCashflow } from './forecast.ts'
import { applyTransactions, recordBalance } from './ingest.ts'
import {
  loadBalanceKindDays,
  loadCategoryDays,
  seriesBounds,
  timeZoneOf,
  todayOf,
} from './series.ts'
import { summarizeCashflow } from './summary.ts'

export const SERVICE = 'cashflow'
/** Longest range /daily and /analyze accept, about ten years. */
const MAX_RANGE_DAYS = 3660

const dbOf = (ctx: ServiceContext, tenantId: string) => ctx.registry.tenant(SERVICE, tenantId)

function dayParam(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  const day = value.length > 10 && !Number.isNaN(Date.parse(value)) ? value.slice(0, 10) : value
  if (!isDay(day)) throw invalidField(field, 'must be a date YYYY-MM-DD')
  return day
}

function checkRange(from: string, to: string): void {
  if (from > to) throw invalidField('from', 'must not be after to')
  if (daysBetween(from, to) >= MAX_RANGE_DAYS) {
    throw invalidField('from', `the range may span at most ${MAX_RANGE_DAYS} days`)
  }
}

/** Applies one categorized batch once (inbox) and checks the low-balance alert in the same transaction. */
export function ingestBatch(
  ctx: ServiceContext,
  {
    tenantId,
    eventId,
    transactions,
  }: { tenantId: string; eventId: string; transactions: readonly TransactionEvent[] },
): boolean {
  const db = dbOf(ctx, tenantId)
  const timeZone = timeZoneOf(ctx, tenantId)
  return handleOnce(db, SERVICE, eventId, () => {
    applyTransactions(db, { tenantId, timeZone, transactions, now: ctx.clock.now() })
    evaluateLowBalance(db, tenantId, ctx.clock)
  })
}

/**
 * The provider's own account balance (Account Balance result, `mobilemoney.balance.reported`)
 * becomes the tenant's known balance when it is the latest, and the low-balance alert is checked
 * against it, once per event.
 */
export function recordReportedBalance(
  ctx: ServiceContext,
  {
    tenantId,
    eventId,
    balance,
    reportedAt,
  }: { tenantId: string; eventId: string; balance: number; reportedAt: string },
): boolean {
  const db = dbOf(ctx, tenantId)
  return handleOnce(db, `${SERVICE}.balance`, eventId, () => {
    recordBalance(db, { tenantId, balance: centsOf(balance), at: reportedAt, now: ctx.clock.now() })
    evaluateLowBalance(db, tenantId, ctx.clock)
  })
}

/** Keeps the latest statement import's proof for the tenant, once per event. */
export function recordStatement(
  ctx: ServiceContext,
  {
    tenantId,
    eventId,
    statement,
    occurredAt,
  }: { tenantId: string; eventId: string; statement: StatementProcessedEvent; occurredAt: string },
): boolean {
  const db = dbOf(ctx, tenantId)
  return handleOnce(db, `${SERVICE}.statements`, eventId, () => {
    recordStatementProof(db, { tenantId, statement, processedAt: occurredAt, now: ctx.clock.now() })
  })
}

export function getSummary(
  ctx: ServiceContext,
  tenantId: string,
  query: { days?: number; as_of?: string; from?: string; to?: string },
) {
  const db = dbOf(ctx, tenantId)
  const bounds = seriesBounds(db, tenantId)
  const today = todayOf(ctx, tenantId)
  // Without a day asked for, the window ends at the last day with data when that is older than
  // today: a statement imported a week after it ended is not a week of "no revenue".
  const to =
    dayParam(query.to, 'to') ??
    dayParam(query.as_of, 'as_of') ??
    (bounds && bounds.last < today ? bounds.last : today)
  const from = dayParam(query.from, 'from')
  let days = query.days ?? 30
  if (from) {
    checkRange(from, to)
    days = daysBetween(from, to) + 1
  }
  return summarizeCashflow(db, tenantId, {
    to,
    days,
    state: readState(db, tenantId),
    first: bounds?.first ?? null,
    dataQuality: readDataQuality(db, tenantId),
  })
}

export function getDaily(
  ctx: ServiceContext,
  tenantId: string,
  query: { from?: string; to?: string },
) {
  const to = dayParam(query.to, 'to') ?? todayOf(ctx, tenantId)
  const from = dayParam(query.from, 'from') ?? addDays(to, -29)
  checkRange(from, to)
  const db = dbOf(ctx, tenantId)
  const movesByDay = flowsByDay(loadBalanceKindDays(db, { tenantId, from, to }), (r) => r.kind)
  const byDay = flowsByDay(loadCategoryDays(db, { tenantId, from, to }), (r) => r.category)
  const data = []
  for (let day = from; day <= to; day = addDays(day, 1)) {
    const categories = byDay.get(day) ?? {}
    let inflow = 0
    let outflow = 0
    for (const c of Object.values(categories)) {
      inflow += centsOf(c.inflow)
      outflow += centsOf(c.outflow)
    }
    data.push({
      date: day,
      inflow: toMajor(inflow),
      outflow: toMajor(outflow),
      net: toMajor(inflow - outflow),
      categories,
      balance_moves: movesByDay.get(day) ?? {},
    })
  }
  return { tenant_id: tenantId, from, to, data }
}

/**
 * Default period: the year up to the last day with data (or today without data), never before
 * the first day with data.
 */
export function analyze(
  ctx: ServiceContext,
  tenantId: string,
  body: { from?: string; to?: string; options?: Partial<AnalyzeOptions> },
) {
  const db = dbOf(ctx, tenantId)
  const bounds = seriesBounds(db, tenantId)
  const to = dayParam(body.to, 'to') ?? bounds?.last ?? todayOf(ctx, tenantId)
  let from = dayParam(body.from, 'from')
  if (!from) {
    from = addDays(to, -364)
    if (bounds && bounds.first > from && bounds.first <= to) from = bounds.first
  }
  checkRange(from, to)
  return analyzeCashflow(db, {
    tenantId,
    from,
    to,
    options: {
      significance: body.options?.significance ?? 0.05,
      drivers_limit: body.options?.drivers_limit ?? 5,
      recurring: body.options?.recurring ?? true,
      recurring_limit: body.options?.recurring_limit ?? 20,
    },
  })
}

export function forecast(ctx: ServiceContext, tenantId: string, horizon: number) {
  const db = dbOf(ctx, tenantId)
  return forecastCashflow(db, { tenantId, horizon, balanceCents: readState(db, tenantId).balance })
}

export function getSettings(ctx: ServiceContext, tenantId: string) {
  const state = readState(dbOf(ctx, tenantId), tenantId)
  return {
    tenant_id: tenantId,
    low_balance_threshold: state.threshold === null ? null : toMajor(state.threshold),
  }
}

/** Sets the threshold and checks it at once: a balance already below it alerts (once). */
export function updateSettings(
  ctx: ServiceContext,
  tenantId: string,
  body: { low_balance_threshold: number | null },
) {
  const db = dbOf(ctx, tenantId)
  const threshold =
    body.low_balance_threshold === null
      ? null
      : toMinor(body.low_balance_threshold, 'low_balance_threshold')
  db.write(() => {
    setThreshold(db, { tenantId, threshold, now: ctx.clock.now() })
    evaluateLowBalance(db, tenantId, ctx.clock)
  })
  return getSettings(ctx, tenantId)
}

type Flow = { inflow: number; outflow: number; net: number }

/** Per-day rows of cents (by kind or category) as day → key → flow in major units. */
function flowsByDay<R extends { day: string; inflow: number; outflow: number }>(
  rows: R[],
  keyOf: (row: R) => string,
): Map<string, Record<string, Flow>> {
  const byDay = new Map<string, Record<string, Flow>>()
  for (const row of rows) {
    const flows = byDay.get(row.day) ?? {}
    flows[keyOf(row)] = {
      inflow: toMajor(row.inflow),
      outflow: toMajor(row.outflow),
      net: toMajor(row.inflow - row.outflow),
    }
    byDay.set(row.day, flows)
  }
  return byDay
}
