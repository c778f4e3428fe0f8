import type { Db } from './db.ts'
import { hasInbox, keyOf, nextTurn, q, type TenantTable } from './move-tables.ts'

/**
 * Change capture for a tenant move: while the rows are copied from a snapshot, triggers in the
 * source database log the key (rowid, or a `WITHOUT ROWID` table's primary key) of every row of the moving tenant that is inserted, updated or
 * deleted (by any connection or process), and of every inbox record written. The final step of
 * the move, under the source's write lock, copies those rows again. The triggers live in the file
 * (a TEMP trigger sees only its own connection) and are dropped by that final step, or by the
 * settlement of an interrupted move.
 */

const lit = (value: string) => `'${value.replaceAll("'", "''")}'`

/** Tenant ids have no `_` (schema/tenant-id.ts), so one tenant's prefix is never another's. */
const prefixOf = (tenantId: string) => `mmp_move__${tenantId}__`
const logOf = (tenantId: string) => `${prefixOf(tenantId)}log`

/** Drops the capture objects a move of this tenant left in a database. Call inside a write. */
export function dropCapture(db: Db, tenantId: string): number {
  const prefix = prefixOf(tenantId)
  const objects = db.sqlite
    .query<{ type: string; name: string }, [number, string]>(
      "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'table') AND substr(name, 1, ?) = ? ORDER BY type DESC",
    )
    .all(prefix.length, prefix)
  for (const o of objects) {
    db.sqlite.run(`DROP ${o.type === 'trigger' ? 'TRIGGER' : 'TABLE'} IF EXISTS ${q(o.name)}`)
  }
  return objects.length
}

/** A trigger logging a table's changes: `body` runs after each `event` row that passes `when`. */
interface Trigger {
  table: string
  name: string
  event: 'INSERT' | 'UPDATE' | 'DELETE'
  when: string
  body: string
}

/**
 * Starts logging the tenant's row changes in a source database: the log, then each table's
 * triggers, each in a short write transaction of its own with a turn of the event loop between
 * (0.1-0.3 ms a table, which adds up in a service with many tables). Logging is complete
 * for the snapshot a copy takes once this resolves: a row written before its table's triggers
 * came is in that snapshot. The caller drops the capture (`dropCapture`) if this fails half-way.
 */
export async function startCapture(
  db: Db,
  tenantId: string,
  tables: readonly TenantTable[],
): Promise<void> {
  const log = q(logOf(tenantId))
  const prefix = prefixOf(tenantId)
  const tenant = lit(tenantId)
  db.write(() => {
    dropCapture(db, tenantId)
    db.sqlite.run(`CREATE TABLE ${log} (tbl TEXT NOT NULL, k ANY NOT NULL) STRICT`)
  })
  const trigger = ({ table, name, event, when, body }: Trigger) =>
    db.sqlite.run(
      `CREATE TRIGGER ${q(`${prefix}${table}_${name}`)} AFTER ${event} ON ${q(table)}${when} BEGIN ${body}; END`,
    )
  for (const t of tables) {
    await nextTurn()
    db.write(() => {
      const tbl = lit(t.name)
      // A composite key is logged as a JSON array of its values.
      const key = (row: 'NEW' | 'OLD') =>
        t.key && t.key.length > 1 ? `json_array${keyOf(t, `${row}.`)}` : keyOf(t, `${row}.`)
      trigger({
        table: t.name,
        name: 'ins',
        event: 'INSERT',
        when: ` WHEN NEW.tenant_id = ${tenant}`,
        body: `INSERT INTO ${log} VALUES (${tbl}, ${key('NEW')})`,
      })
      trigger({
        table: t.name,
        name: 'upd',
        event: 'UPDATE',
        when: ` WHEN OLD.tenant_id = ${tenant} OR NEW.tenant_id = ${tenant}`,
        body: `INSERT INTO ${log} VALUES (${tbl}, ${key('OLD')}), (${tbl}, ${key('NEW')})`,
      })
      trigger({
        table: t.name,
        name: 'del',
        event: 'DELETE',
        when: ` WHEN OLD.tenant_id = ${tenant}`,
        body: `INSERT INTO ${log} VALUES (${tbl}, ${key('OLD')})`,
      })
    })
  }
  // Inbox records carry no tenant: every one written meanwhile travels (they are few).
  if (hasInbox(db.sqlite)) {
    await nextTurn()
    const key = 'json_array(NEW.consumer, NEW.event_id)'
    db.write(() =>
      trigger({
        table: 'inbox',
        name: 'ins',
        event: 'INSERT',
        when: '',
        body: `INSERT INTO ${log} VALUES ('inbox', ${key})`,
      }),
    )
  }
}

/** Keys the capture logged, by table, and where in the log they end. */
export interface Logged {
  /** A rowid or a one-column key as it is, a composite key as the array of its values. */
  keys: Map<string, unknown[][]>
  /** The log's position after them: the next read starts there. */
  last: number
  /** How many distinct keys. */
  count: number
}

/**
 * The keys logged after position `after` (0: all), each once. One statement, so the answer is
 * what the log held at one moment; under the source's write lock it is complete.
 */
export function readCapture(
  db: Db,
  tenantId: string,
  tables: readonly TenantTable[],
  after = 0,
): Logged {
  const composite = new Set(tables.filter((t) => t.key && t.key.length > 1).map((t) => t.name))
  composite.add('inbox')
  const keys = new Map<string, unknown[][]>()
  const seen = new Set<string>()
  let last = after
  const rows = db.sqlite
    .query<{ tbl: string; k: unknown; at: number }, [number]>(
      `SELECT tbl, k, rowid AS at FROM ${q(logOf(tenantId))} WHERE rowid > ?`,
    )
    .all(after)
  for (const r of rows) {
    last = Math.max(last, r.at)
    const id = `${r.tbl}\u0000${typeof r.k}\u0000${String(r.k)}`
    if (seen.has(id)) continue
    seen.add(id)
    const list = keys.get(r.tbl) ?? []
    list.push(composite.has(r.tbl) ? (JSON.parse(String(r.k)) as unknown[]) : [r.k])
    keys.set(r.tbl, list)
  }
  return { keys, last, count: seen.size }
}
