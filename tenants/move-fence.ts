import type { Db } from './db.ts'
import { q, type TenantTable } from './move-tables.ts'

/**
 * Fences of a tenant move: once a tenant's rows have moved, a request or consumer that looked up
 * the old placement just before the switch (and writes after it, having waited on the lock) must
 * not write into the file the tenant left, where the write would be acknowledged and then purged.
 * Triggers in the old file refuse inserts and updates of the tenant's rows with an error the
 * services answer as 503 with Retry-After (services/kernel/problem.ts): the client's retry reads
 * the new placement. Deletes pass, so the move's purge runs. A fence is inert after
 * `FENCE_S` (no request is in flight that long) and dropped by the next move that touches the
 * file, or at once by a move of the same tenant back into it.
 */

/** How long a fence refuses writes: far longer than any request or event handling takes. */
export const FENCE_S = 60

/** The text a fenced write fails with; `storageError` recognizes it. */
export const FENCED = /^mmp: tenant \S+ has moved/

/**
 * The text when the tenant moved to another instance (tenants/handoff.ts): an event refused so is
 * set aside, not retried here, because the move replays it where the tenant went.
 */
export const FENCED_ELSEWHERE = /^mmp: tenant \S+ has moved to another instance/

const lit = (value: string) => `'${value.replaceAll("'", "''")}'`
const PREFIX = 'mmp_fence__'

/** Puts up fences for a tenant in a database it is leaving. Call inside the move's write lock. */
export function fenceTenant({
  db,
  tenantId,
  tables,
  now = Date.now(),
  ...opts
}: {
  db: Db
  tenantId: string
  tables: readonly TenantTable[]
  now?: number
  seconds?: number
  elsewhere?: boolean
}): void {
  const until = Math.ceil(now / 1000) + (opts.seconds ?? FENCE_S)
  const tenant = lit(tenantId)
  const where = opts.elsewhere ? ' to another instance' : ''
  const refuse = `SELECT RAISE(ABORT, ${lit(`mmp: tenant ${tenantId} has moved${where}; retry`)})`
  for (const t of tables) {
    for (const [event, suffix] of [
      ['INSERT', 'ins'],
      ['UPDATE', 'upd'],
    ] as const) {
      db.sqlite.run(
        `CREATE TRIGGER IF NOT EXISTS ${q(`${PREFIX}${tenantId}__${until}__${t.name}_${suffix}`)} BEFORE ${event} ON ${q(t.name)} WHEN NEW.tenant_id = ${tenant} AND unixepoch() < ${until} BEGIN ${refuse}; END`,
      )
    }
  }
}

/**
 * Drops the fences that have run out, and every fence of `tenantId` when given (the tenant is
 * moving back into this file). Call inside a write. Returns how many triggers went.
 */
export function dropFences(db: Db, tenantId: string | null, now = Date.now()): number {
  const names = db.sqlite
    .query<{ name: string }, [string]>(
      "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, 11) = ?",
    )
    .all(PREFIX)
    .map((r) => r.name)
  let dropped = 0
  for (const name of names) {
    // mmp_fence__<tenant>__<until>__<table>_<event>; tenant ids have no `_`.
    const [, tenant, until] = name.split('__')
    if (tenant === tenantId || Number(until) * 1000 <= now) {
      db.sqlite.run(`DROP TRIGGER IF EXISTS ${q(name)}`)
      dropped++
    }
  }
  return dropped
}
