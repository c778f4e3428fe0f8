import type { Database } from 'bun:sqlite'
import type { Db } from './db.ts'
import { keyIs, q, type TenantTable } from './move-tables.ts'

/**
 * Redoing logged rows in a target merged early (tenants/move-merge.ts): a logged row is found in
 * the target by the identity the staging copy had for it, deleted there, and inserted again as the
 * staging copy has it once the change is applied. Used by the passes before the final step
 * (tenants/move-catchup.ts) and by the final step.
 */

/** A table merged early and the columns a row is found by in the target (`MergePlan.early`). */
export interface EarlyTable {
  t: TenantTable
  identity: string[]
}

type Plan = { early: readonly EarlyTable[] }

/**
 * The rows of `t` that logged keys find in the staging copy, with `columns`; `tenantId` also
 * requires the row to be the tenant's.
 */
function findLogged(
  staging: Database,
  t: TenantTable,
  keys: unknown[][],
  opts: { columns: string[]; tenantId?: string },
): Record<string, unknown>[] {
  const mine = opts.tenantId === undefined ? '' : ' AND tenant_id = ?'
  const select = staging.prepare<Record<string, unknown>, never[]>(
    `SELECT ${opts.columns.map(q).join(', ')} FROM ${q(t.name)} WHERE ${keyIs(t)}${mine}`,
  )
  const found: Record<string, unknown>[] = []
  for (const key of keys) {
    const args = opts.tenantId === undefined ? key : [...key, opts.tenantId]
    const row = select.get(...(args as never[]))
    if (row) found.push(row)
  }
  select.finalize()
  return found
}

/**
 * In the final step, before the logged rows are applied to the staging copy: the identities
 * (in the target) of the early tables' logged rows as the staging copy has them now.
 */
export function identitiesOf(
  staging: Database,
  plan: Plan,
  captured: Map<string, unknown[][]>,
): Map<string, unknown[][]> {
  const out = new Map<string, unknown[][]>()
  for (const { t, identity } of plan.early) {
    const keys = captured.get(t.name)
    if (!keys) continue
    const rows = findLogged(staging, t, keys, { columns: identity })
    out.set(
      t.name,
      rows.map((row) => identity.map((c) => row[c])),
    )
  }
  return out
}

/** The logged rows of the early tables as the staging copy has them now, by table. */
export function rowsOf(
  staging: Database,
  plan: Plan,
  captured: Map<string, unknown[][]>,
  tenantId: string,
): Map<string, Record<string, unknown>[]> {
  const out = new Map<string, Record<string, unknown>[]>()
  for (const { t } of plan.early) {
    const keys = captured.get(t.name)
    if (keys) out.set(t.name, findLogged(staging, t, keys, { columns: t.columns, tenantId }))
  }
  return out
}

/**
 * Redoes logged rows of the early tables in the target, inside the caller's write transaction:
 * the rows at their old identities (`stale`) leave, their present state (`fresh`) comes in.
 * Returns the change in the tenant's row count per table.
 */
export function redoInTarget({
  target,
  plan,
  stale,
  fresh,
  tenantId,
}: {
  target: Db
  plan: Plan
  stale: Map<string, unknown[][]>
  fresh: Map<string, Record<string, unknown>[]>
  tenantId: string
}): Record<string, number> {
  const changed: Record<string, number> = {}
  for (const { t, identity } of plan.early) {
    const del = target.sqlite.prepare(
      `DELETE FROM main.${q(t.name)} WHERE (${identity.map(q).join(', ')}) = (${identity.map(() => '?').join(', ')}) AND tenant_id = ?`,
    )
    let n = 0
    for (const values of stale.get(t.name) ?? []) {
      n -= del.run(...([...values, tenantId] as never[])).changes
    }
    del.finalize()
    changed[t.name] = n
  }
  // Referenced tables first (the plan's order), so the foreign keys hold at every insert.
  for (const { t } of plan.early) {
    const list = t.columns.map(q).join(', ')
    const ins = target.sqlite.prepare(
      `INSERT INTO main.${q(t.name)} (${list}) VALUES (${t.columns.map(() => '?').join(', ')})`,
    )
    let n = 0
    for (const row of fresh.get(t.name) ?? []) {
      n += ins.run(...(t.columns.map((c) => row[c]) as never[])).changes
    }
    ins.finalize()
    changed[t.name] = (changed[t.name] ?? 0) + n
  }
  return changed
}
