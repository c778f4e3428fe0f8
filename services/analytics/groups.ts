import { toMajor } from '../kernel/money.ts'
import { type CustomerView, cleanName, topCustomers } from './customers.ts'
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

/** The rows of a group, as SQL on the transactions table (no user input inside). */
const GROUP_SQL: Record<Exclude<Group, 'customers'>, string> = {
  suppliers: `kind = 'supplier_payment' AND coalesce(category, '') NOT IN (${OWN_CATEGORIES})`,
  staff: "kind = 'supplier_payment' AND category = 'Salaries'",
  landlord: "kind = 'supplier_payment' AND category = 'Rent'",
  utilities: "kind = 'supplier_payment' AND category = 'Utilities'",
  agents: "kind IN ('cash_deposit', 'cash_withdrawal')",
  lenders: "kind IN ('loan_drawn', 'loan_repaid')",
}

interface Row {
  key: string
  name: string | null
  phone: string | null
  count: number
  in_cents: number
  out_cents: number
  first_seen: string
  last_seen: string
}

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
  const where = ['tenant_id = ?', `(${GROUP_SQL[group]})`]
  const args: (string | number)[] = [scope.tenantId]
  const { fromMs, toMs } = scope.range
  if (fromMs !== null) where.push('occurred_at >= ?') && args.push(new Date(fromMs).toISOString())
  if (toMs !== null) where.push('occurred_at < ?') && args.push(new Date(toMs).toISOString())
  if (scope.userId !== null) where.push('user_id = ?') && args.push(scope.userId)
  const rows = scope.db.sqlite
    .query(
      `SELECT coalesce(counterparty_key, 'name:' || lower(trim(counterparty_name)), 'kind:' || kind)
           AS key, max(counterparty_name) AS name, max(counterparty_phone) AS phone,
         count(*) AS count,
         sum(CASE WHEN direction = 'in' THEN amount_cents ELSE 0 END) AS in_cents,
         sum(CASE WHEN direction = 'out' THEN amount_cents ELSE 0 END) AS out_cents,
         min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
       FROM transactions INDEXED BY transactions_time WHERE ${where.join(' AND ')}
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
      .query<{ active: number; fresh: number }, (string | number)[]>(
        `SELECT count(*) AS active, coalesce(sum(first_day >= ?), 0) AS fresh FROM (
           SELECT counterparty_key, min(local_day) AS first_day,
             max(local_day >= ? AND local_day <= ?) AS seen
           FROM transactions WHERE tenant_id = ? AND user_id = ? AND kind = 'customer_payment'
             AND direction = 'in' AND counterparty_key IS NOT NULL AND local_day <= ?
           GROUP BY counterparty_key) WHERE seen = 1`,
      )
      .get(fromDay, fromDay, toDay, scope.tenantId, scope.userId, toDay)
    return row ?? { active: 0, fresh: 0 }
  }
  // The window's customers from the daily rollup, each looked up in the all-time rollup for the
  // day it was first seen: work in proportion to the window, not to the whole history.
  const row = scope.db.sqlite
    .query<{ active: number; fresh: number }, string[]>(
      `SELECT count(*) AS active, coalesce(sum(c.first_seen >= ?), 0) AS fresh
       FROM (SELECT DISTINCT counterparty_key AS k FROM daily_counterparties
             WHERE tenant_id = ? AND direction = 'in' AND day >= ? AND day <= ?) w
       LEFT JOIN counterparties c ON c.tenant_id = ? AND c.key = w.k`,
    )
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
  const row = scope.db.sqlite
    .query<{ first_day: string | null; last_day: string | null }, string[]>(
      'SELECT min(day) AS first_day, max(day) AS last_day FROM daily_totals WHERE tenant_id = ?',
    )
    .get(scope.tenantId)
  return { first_day: row?.first_day ?? null, last_day: row?.last_day ?? null }
}

/**
 * The local days the imported statements cover (their first to their last row), or null: the
 * first and last statement report through the reports' (tenant, source, time) index.
 */
export function statementSpan(scope: Scope): { from: string; to: string } | null {
  const edge = (fn: 'min' | 'max') =>
    `(SELECT ${fn}(occurred_at) FROM receipt_reports WHERE tenant_id = ?1 AND source = 'statement')`
  const row = scope.db.sqlite
    .query<{ first: string | null; last: string | null }, [string]>(
      `SELECT ${edge('min')} AS first, ${edge('max')} AS last`,
    )
    .get(scope.tenantId)
  if (!row?.first || !row.last) return null
  const day = (iso: string) => scope.zone.dayOf(Date.parse(iso))
  return { from: day(row.first), to: day(row.last) }
}
