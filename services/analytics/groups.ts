import { eq, max, min } from 'drizzle-orm'
import {
  counterparties,
  dailyCounterparties,
  dailyTotals,
  receiptReports,
} from '../../schema/analytics/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import { toMajor } from '../kernel/money.ts'
import { type CounterpartyTotals, type CustomerView, cleanName, topCustomers } from './customers.ts'
import { TIME_INDEX, tx } from './stored-sql.ts'
import type { Scope } from './summary.ts'

/**
 * Who the owner deals with, in the owner's groups: the people who pay (customers) and, among those
 * paid, suppliers, staff (salaries), the landlord (rent) and utilities (power, water, internet),
 * then the agents where cash goes in and out and the lenders (Fuliza, M-Shwari, KCB M-Pesa). A
 * group is a set of kinds (schema/vocabulary.ts KINDS) and, for supplier payments, categories.
 */
export const GROUPS = [
  'customers',
  'suppliers',
  'staff',
  'landlord',
  'utilities',
  'agents',
  'lenders',
] as const
export type Group = (typeof GROUPS)[number]

/** Supplier-payment categories that are a group of their own. */
const CATEGORY_GROUP = { Salaries: 'staff', Rent: 'landlord', Utilities: 'utilities' } as const
const OWN_CATEGORIES = Object.keys(CATEGORY_GROUP)
  .map((c) => `'${c}'`)
  .join(', ')

const supplierIn = (category: string) =>
  `${tx.kind} = 'supplier_payment' AND ${tx.category} = '${category}'`

/** The rows of a group, as SQL on the transactions table (no user input inside). */
const GROUP_SQL: Record<Exclude<Group, 'customers'>, string> = {
  suppliers: `${tx.kind} = 'supplier_payment' AND coalesce(${tx.category}, '') NOT IN (${OWN_CATEGORIES})`,
  staff: supplierIn('Salaries'),
  landlord: supplierIn('Rent'),
  utilities: supplierIn('Utilities'),
  agents: `${tx.kind} IN ('cash_deposit', 'cash_withdrawal')`,
  lenders: `${tx.kind} IN ('loan_drawn', 'loan_repaid')`,
}

/** A group's counterparty as the group read gives it: `CounterpartyTotals` without the total. */
type Row = Omit<CounterpartyTotals, 'total'>

const sumIf = (direction: 'in' | 'out') =>
  `sum(CASE WHEN ${tx.direction} = '${direction}' THEN ${tx.amountCents} ELSE 0 END)`

/** A group's counterparties, grouped by key (phone, else name, else the kind), with a WHERE. */
const GROUP_SELECT = `SELECT coalesce(${tx.counterpartyKey}, 'name:' || lower(trim(${tx.counterpartyName})),
    'kind:' || ${tx.kind}) AS key, max(${tx.counterpartyName}) AS name,
    max(${tx.counterpartyPhone}) AS phone, count(*) AS count,
    ${sumIf('in')} AS in_cents, ${sumIf('out')} AS out_cents,
    min(${tx.occurredAt}) AS first_seen, max(${tx.occurredAt}) AS last_seen
  FROM ${tx.$} INDEXED BY ${TIME_INDEX} WHERE`

/**
 * The top counterparties of one group over the scope's period, by volume. Customers come from the
 * rollups with their RFM segment (`topCustomers`); the other groups are read from the rows through
 * the time index, grouped by counterparty (phone, else name, else the kind itself: "Fuliza").
 */
export function topOfGroup(
  scope: Scope,
  group: Group,
  opts: { limit: number; withRfm: boolean; nowMs: number },
): CustomerView[] {
  if (group === 'customers') return topCustomers(scope, { ...opts, direction: 'in' })
  const where = [`${tx.tenantId} = ?`, `(${GROUP_SQL[group]})`]
  const args: (string | number)[] = [scope.tenantId]
  const { fromMs, toMs } = scope.range
  const at = tx.occurredAt
  if (fromMs !== null) where.push(`${at} >= ?`) && args.push(new Date(fromMs).toISOString())
  if (toMs !== null) where.push(`${at} < ?`) && args.push(new Date(toMs).toISOString())
  if (scope.userId !== null) where.push(`${tx.userId} = ?`) && args.push(scope.userId)
  const rows = scope.db.sqlite
    .query(
      `${GROUP_SELECT} ${where.join(' AND ')}
       GROUP BY 1 ORDER BY in_cents + out_cents DESC, count DESC, key LIMIT ?`,
    )
    .all(...args, opts.limit) as Row[]
  return rows.map((r) => {
    const name = cleanName(r.name)
    return {
      counterparty: name ?? r.phone ?? r.key.replace(/^(tel|name|kind):/, '').replace(/_/g, ' '),
      counterparty_name: name,
      counterparty_phone: r.phone,
      count: r.count,
      total: toMajor(r.in_cents + r.out_cents),
      total_in: toMajor(r.in_cents),
      total_out: toMajor(r.out_cents),
      first_seen: r.first_seen,
      last_seen: r.last_seen,
      segment: null,
      rfm: null,
    }
  })
}

const dc = sqlNames(dailyCounterparties)
const cp = sqlNames(counterparties)
const day = tx.localDay

/** `customersActive` for one user: their customer payments' first day and whether in the window. */
const MY_CUSTOMERS_ACTIVE = `SELECT count(*) AS active, coalesce(sum(first_day >= ?), 0) AS fresh
  FROM (SELECT ${tx.counterpartyKey}, min(${day}) AS first_day, max(${day} >= ? AND ${day} <= ?) AS seen
    FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.userId} = ? AND ${tx.kind} = 'customer_payment'
      AND ${tx.direction} = 'in' AND ${tx.counterpartyKey} IS NOT NULL AND ${day} <= ?
    GROUP BY ${tx.counterpartyKey}) WHERE seen = 1`

/** `customersActive` for the tenant: the window's customers, each with its all-time first day. */
const CUSTOMERS_ACTIVE = `SELECT count(*) AS active, coalesce(sum(c.${cp.firstSeen} >= ?), 0) AS fresh
  FROM (SELECT DISTINCT ${dc.counterpartyKey} AS k FROM ${dc.$}
    WHERE ${dc.tenantId} = ? AND ${dc.direction} = 'in' AND ${dc.day} >= ? AND ${dc.day} <= ?) w
  LEFT JOIN ${cp.$} c ON c.${cp.tenantId} = ? AND c.${cp.key} = w.k`

/**
 * Customers (people who paid the tenant) active on whole local days `fromDay`…`toDay`, and how
 * many of them paid for the first time then. Suppliers, staff, the landlord, agents and lenders
 * are never counted: they are not customers.
 */
export function customersActive(
  scope: Scope,
  fromDay: string,
  toDay: string,
): { active: number; fresh: number } {
  if (scope.userId !== null) {
    const row = scope.db.sqlite
      .query<{ active: number; fresh: number }, (string | number)[]>(MY_CUSTOMERS_ACTIVE)
      .get(fromDay, fromDay, toDay, scope.tenantId, scope.userId, toDay)
    return row ?? { active: 0, fresh: 0 }
  }
  // The window's customers from the daily rollup, each looked up in the all-time rollup for the
  // day it was first seen: work in proportion to the window, not to the whole history.
  const row = scope.db.sqlite
    .query<{ active: number; fresh: number }, string[]>(CUSTOMERS_ACTIVE)
    .get(
      new Date(scope.zone.startOf(fromDay)).toISOString(),
      scope.tenantId,
      fromDay,
      toDay,
      scope.tenantId,
    )
  return row ?? { active: 0, fresh: 0 }
}

/** The days a scope has data: its first and last local day with a transaction. */
export function dataSpan(scope: Scope): { first_day: string | null; last_day: string | null } {
  const t = dailyTotals
  const row = scope.db.orm
    .select({ first_day: min(t.day), last_day: max(t.day) })
    .from(t)
    .where(eq(t.tenantId, scope.tenantId))
    .get()
  return { first_day: row?.first_day ?? null, last_day: row?.last_day ?? null }
}

const rr = sqlNames(receiptReports)
/** The first or last statement report: each a seek on the reports' (tenant, source, time) index. */
const edge = (fn: 'min' | 'max') =>
  `(SELECT ${fn}(${rr.occurredAt}) FROM ${rr.$} WHERE ${rr.tenantId} = ?1 AND ${rr.source} = 'statement')`
const STATEMENT_SPAN = `SELECT ${edge('min')} AS first, ${edge('max')} AS last`

/**
 * The local days the imported statements cover (their first to their last row), or null: the
 * first and last statement report through the reports' (tenant, source, time) index.
 */
export function statementSpan(scope: Scope): { from: string; to: string } | null {
  const row = scope.db.sqlite
    .query<{ first: string | null; last: string | null }, [string]>(STATEMENT_SPAN)
    .get(scope.tenantId)
  if (!row?.first || !row.last) return null
  const day = (iso: string) => scope.zone.dayOf(Date.parse(iso))
  return { from: day(row.first), to: day(row.last) }
}
