import type { Database } from 'bun:sqlite'
import { counterparties, dailyCounterparties } from '../../schema/analytics/tables.ts'
import {
  type CustomerView,
  type Rfm,
  SEGMENTS,
  type Segment,
} from '../../schema/analytics/views.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import { toMajor } from '../kernel/money.ts'
import { pct } from './insight-words.ts'
import { splitRange } from './range.ts'
import { scoreRfm } from './rfm.ts'
import { TRADING_SQL, tx } from './stored-sql.ts'
import type { Scope } from './summary.ts'

const cp = sqlNames(counterparties)
const dc = sqlNames(dailyCounterparties)

/** A counterparty's totals over a period (cents), with its name and phone from `counterparties`. */
export type CounterpartyTotals = Pick<
  typeof counterparties.$inferSelect,
  'key' | 'name' | 'phone'
> & {
  count: number
  total: number
  in_cents: number
  out_cents: number
  first_seen: string
  last_seen: string
}

/** sum(amount) in one direction (`t.` for a table alias), for the in and out totals. */
const sumIf = (direction: 'in' | 'out', t = '') =>
  `sum(CASE WHEN ${t}${tx.direction} = '${direction}' THEN ${t}${tx.amountCents} ELSE 0 END)`

const ALL_TOTALS = `SELECT ${selectList(counterparties, ['key', 'name', 'phone'])}, ${cp.txCount} AS count,
  ${cp.totalCents} AS total, ${cp.inCents} AS in_cents, ${cp.outCents} AS out_cents,
  ${cp.firstSeen} AS first_seen, ${cp.lastSeen} AS last_seen FROM ${cp.$} WHERE ${cp.tenantId} = ?`

/**
 * Every counterparty's totals for a scope: customers and suppliers only, the counterparties of
 * customer and supplier payments (an agent, Fuliza, M-Shwari or the owner's bank never is; the
 * rollups hold only those, `isTradingParty`). Without a range or user, one read of the
 * `counterparties` rollup; with a range, the daily counterparty rollup plus partial edge days;
 * `scope=me` reads the caller's transactions (the rollups are per tenant, not per user).
 */
export function counterpartyTotals(scope: Scope): CounterpartyTotals[] {
  const { db, tenantId, range } = scope
  if (scope.userId === null && range.fromMs === null && range.toMs === null) {
    // Shared by every read until the next write: callers filter and sort copies.
    return untilChanged(
      db,
      `all\u0000${tenantId}`,
      () => db.sqlite.query(ALL_TOTALS).all(tenantId) as readonly CounterpartyTotals[],
    ) as CounterpartyTotals[]
  }
  const parts: string[] = []
  const args: unknown[] = []
  const txnPart = (fromIso: string | null, toIso: string | null) => {
    const where = [`${tx.tenantId} = ?`, `${tx.counterpartyKey} IS NOT NULL`, TRADING_SQL]
    args.push(tenantId)
    if (fromIso) where.push(`${tx.occurredAt} >= ?`) && args.push(fromIso)
    if (toIso) where.push(`${tx.occurredAt} < ?`) && args.push(toIso)
    if (scope.userId !== null) where.push(`${tx.userId} = ?`) && args.push(scope.userId)
    parts.push(`SELECT ${tx.counterpartyKey} AS key, count(*) AS count, sum(${tx.amountCents}) AS total,
      ${sumIf('in')} AS in_cents, ${sumIf('out')} AS out_cents,
      min(${tx.occurredAt}) AS first_seen, max(${tx.occurredAt}) AS last_seen
      FROM ${tx.$} WHERE ${where.join(' AND ')} GROUP BY ${tx.counterpartyKey}`)
  }
  if (scope.userId !== null) {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
    txnPart(iso(range.fromMs), iso(range.toMs))
  } else {
    const split = splitRange(scope.zone, range)
    if (!(split.fromDay && split.toDay && split.fromDay > split.toDay)) {
      // Both directions named: the rollup's key is (tenant, direction, day, counterparty).
      const where = [`${dc.tenantId} = ?`, `${dc.direction} IN ('in', 'out')`]
      args.push(tenantId)
      if (split.fromDay) where.push(`${dc.day} >= ?`) && args.push(split.fromDay)
      if (split.toDay) where.push(`${dc.day} <= ?`) && args.push(split.toDay)
      const sumDc = (d: 'in' | 'out') =>
        `sum(CASE WHEN ${dc.direction} = '${d}' THEN ${dc.amountCents} ELSE 0 END)`
      parts.push(`SELECT ${dc.counterpartyKey} AS key, sum(${dc.txCount}) AS count,
        sum(${dc.amountCents}) AS total, ${sumDc('in')} AS in_cents, ${sumDc('out')} AS out_cents,
        min(${dc.day}) AS first_seen, max(${dc.lastSeen}) AS last_seen
        FROM ${dc.$} WHERE ${where.join(' AND ')} GROUP BY ${dc.counterpartyKey}`)
    }
    for (const e of split.edges) {
      txnPart(new Date(e.fromMs).toISOString(), new Date(e.toMs).toISOString())
    }
  }
  if (parts.length === 0) return []
  return db.sqlite
    .query(
      `SELECT p.key, c.${cp.name} AS name, c.${cp.phone} AS phone, sum(p.count) AS count,
         sum(p.total) AS total, sum(p.in_cents) AS in_cents, sum(p.out_cents) AS out_cents,
         min(p.first_seen) AS first_seen, max(p.last_seen) AS last_seen
       FROM (${parts.join(' UNION ALL ')}) p
       LEFT JOIN ${cp.$} c ON c.${cp.tenantId} = ? AND c.${cp.key} = p.key
       GROUP BY p.key`,
    )
    .all(...(args as never[]), tenantId) as CounterpartyTotals[]
}

/**
 * Money in by counterparty over whole local days from `fromDay` (tenant-wide), from the daily
 * counterparty rollup in its key's (tenant, direction, day) order. A 90-day window of a
 * busy tenant is ~100,000 rollup rows (25 ms to group), so the answer is kept until the database
 * changes (`untilChanged`).
 */
export function moneyInSince(db: Scope['db'], tenantId: string, fromDay: string) {
  return untilChanged(db, `in\u0000${tenantId}\u0000${fromDay}`, () => {
    const sums = new Map<string, number>()
    const rows = db.sqlite
      .query(
        `SELECT ${dc.counterpartyKey}, ${dc.amountCents} FROM ${dc.$}
         WHERE ${dc.tenantId} = ? AND ${dc.direction} = 'in' AND ${dc.day} >= ?`,
      )
      .values(tenantId, fromDay) as Array<[string, number]>
    for (const [k, cents] of rows) sums.set(k, (sums.get(k) ?? 0) + cents)
    return sums
  })
}

const VERSION_SQL = `SELECT (SELECT data_version FROM pragma_data_version) || ':' || total_changes() AS v`
const memos = new WeakMap<Database, { version: string; values: Map<string, unknown> }>()

/**
 * `compute()`'s answer, kept until the database changes: SQLite's `data_version` moves on another
 * connection's commit and `total_changes()` on this one's, so any write, by any process, makes
 * the next read recompute. Callers must not change what it returns.
 */
function untilChanged<T>(db: Scope['db'], key: string, compute: () => T): T {
  const version = db.sqlite.query<{ v: string }, []>(VERSION_SQL).get()!.v
  let memo = memos.get(db.sqlite)
  if (memo?.version !== version) {
    memo = { version, values: new Map() }
    memos.set(db.sqlite, memo)
  }
  if (!memo.values.has(key)) memo.values.set(key, compute())
  return memo.values.get(key) as T
}

/**
 * Counterparty totals of one category's transactions in scope. The rollups have no category per
 * counterparty, so this reads the rows through the time index (a report, not a dashboard read).
 */
function categoryTotals(scope: Scope, category: string): CounterpartyTotals[] {
  const where = [
    `t.${tx.tenantId} = ?`,
    `t.${tx.counterpartyKey} IS NOT NULL`,
    `t.${TRADING_SQL}`,
    `t.${tx.category} = ?`,
  ]
  const args: (string | number)[] = [scope.tenantId, category]
  const { fromMs, toMs } = scope.range
  const at = `t.${tx.occurredAt}`
  if (fromMs !== null) where.push(`${at} >= ?`) && args.push(new Date(fromMs).toISOString())
  if (toMs !== null) where.push(`${at} < ?`) && args.push(new Date(toMs).toISOString())
  if (scope.userId !== null) where.push(`t.${tx.userId} = ?`) && args.push(scope.userId)
  return scope.db.sqlite
    .query(
      `SELECT t.${tx.counterpartyKey} AS key, c.${cp.name} AS name, c.${cp.phone} AS phone,
         count(*) AS count, sum(t.${tx.amountCents}) AS total,
         ${sumIf('in', 't.')} AS in_cents, ${sumIf('out', 't.')} AS out_cents,
         min(${at}) AS first_seen, max(${at}) AS last_seen
       FROM ${tx.$} t LEFT JOIN ${cp.$} c
         ON c.${cp.tenantId} = t.${tx.tenantId} AND c.${cp.key} = t.${tx.counterpartyKey}
       WHERE ${where.join(' AND ')} GROUP BY t.${tx.counterpartyKey}`,
    )
    .all(...args) as CounterpartyTotals[]
}

/**
 * A counterparty's name as people read it: statements keep the masked phone inside the name
 * (`254739***838 FAITH CHEPKOECH`, `0733***444 - MARY`), which says nothing to the owner.
 */
export function cleanName(name: string | null): string | null {
  if (!name) return name
  const cleaned = name
    .replace(/\+?\d*\*{2,}\d*/g, ' ')
    .replace(/\s{2,}/g, ' ')
    .replace(/^[\s:–-]+|[\s:–-]+$/g, '')
  return cleaned || null
}

/**
 * Top counterparties by volume in one direction (the route asks for `in`, the people who pay the
 * tenant, unless told `out`; without a direction, in and out summed), each with its RFM segment.
 */
export function topCustomers(
  scope: Scope,
  opts: {
    limit: number
    direction?: 'in' | 'out' | undefined
    /** Only transactions of this category (the PDF report's filter): read from the rows. */
    category?: string | undefined
    withRfm: boolean
    nowMs: number
  },
): CustomerView[] {
  const inPeriod = opts.category ? categoryTotals(scope, opts.category) : counterpartyTotals(scope)
  const all =
    scope.userId === null && scope.range.fromMs === null && scope.range.toMs === null
      ? inPeriod
      : counterpartyTotals({ ...scope, userId: null, range: { fromMs: null, toMs: null } })
  const rfm = opts.withRfm ? scoreRfm(all, opts.nowMs) : null
  const volume = (c: CounterpartyTotals) =>
    opts.direction === 'in' ? c.in_cents : opts.direction === 'out' ? c.out_cents : c.total
  return inPeriod
    .filter((c) => volume(c) > 0)
    .sort((a, b) => volume(b) - volume(a) || b.count - a.count || (a.key < b.key ? -1 : 1))
    .slice(0, opts.limit)
    .map((c) => {
      const score = rfm?.get(c.key)
      const { segment, ...numbers } = score ?? { segment: null }
      const name = cleanName(c.name)
      return {
        counterparty: name ?? c.phone ?? c.key.replace(/^(tel|name):/, ''),
        counterparty_name: name,
        counterparty_phone: c.phone,
        count: c.count,
        total: toMajor(c.total),
        total_in: toMajor(c.in_cents),
        total_out: toMajor(c.out_cents),
        first_seen: c.first_seen,
        last_seen: c.last_seen,
        segment: segment ?? null,
        rfm: score ? (numbers as Omit<Rfm, 'segment'>) : null,
      }
    })
}

export interface SegmentView {
  segment: Segment
  customers: number
  share_of_customers: number
  total: number
  share_of_value: number
  average_value: number
  average_frequency: number
  average_recency_days: number
}

/** RFM segment sizes and the value (volume) each holds, over all time. */
export function segmentSizes(scope: Scope, nowMs: number): SegmentView[] {
  const all = counterpartyTotals({ ...scope, userId: null, range: { fromMs: null, toMs: null } })
  const rfm = scoreRfm(all, nowMs)
  const grand = all.reduce((s, c) => s + c.total, 0)
  const acc = new Map<Segment, { n: number; cents: number; count: number; days: number }>()
  for (const s of SEGMENTS) acc.set(s, { n: 0, cents: 0, count: 0, days: 0 })
  for (const c of all) {
    const score = rfm.get(c.key)!
    const a = acc.get(score.segment)!
    a.n++
    a.cents += c.total
    a.count += c.count
    a.days += score.recency_days
  }
  return SEGMENTS.map((segment) => {
    const a = acc.get(segment)!
    return {
      segment,
      customers: a.n,
      share_of_customers: pct(a.n, all.length),
      total: toMajor(a.cents),
      share_of_value: pct(a.cents, grand),
      average_value: a.n === 0 ? 0 : Math.round(a.cents / a.n) / 100,
      average_frequency: a.n === 0 ? 0 : Math.round((100 * a.count) / a.n) / 100,
      average_recency_days: a.n === 0 ? 0 : Math.round((10 * a.days) / a.n) / 10,
    }
  })
}

export type { CustomerView }
