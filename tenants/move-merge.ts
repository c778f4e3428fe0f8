import { Database } from 'bun:sqlite'
import type { Db } from './db.ts'
import { withCheckpointer } from './move-checkpoint.ts'
import { deleteRowsInSlices } from './move-purge.ts'
import { type EarlyTable, redoInTarget } from './move-redo.ts'
import {
  countOf,
  hasInbox,
  MoveError,
  nextTurn,
  q,
  renumbers,
  type TenantTable,
  tablesOf,
} from './move-tables.ts'

/**
 * A move into a database file that already exists (a downgrade into the shared file, or a folder
 * an earlier placement left a file in): the staging copy's rows merge into it.
 *
 * The rows of the tables a row can be found by in both files (`MergePlan.early`) go in before the
 * final step, in short write transactions with the event loop turning between them: until the
 * placement switches, nobody reads the tenant there, and the other tenants' reads filter by
 * tenant. The final step then only redoes the rows the change capture logged, found in the target
 * by their key as the staging copy had it. The rest (integer keys local to a file, the outbox the
 * target's relay would publish, tables that reference those) merge in the final step, whole.
 * Should the move fail before the switch, the tenant's rows in the target are stale copies that
 * the caller clears, as after a crash.
 */
export interface MergePlan {
  /** Merged before the final step, referenced tables first, each found by `identity`. */
  early: EarlyTable[]
  /** Merged in the final step. */
  late: TenantTable[]
}

const primaryKey = (db: Database, table: string) =>
  db
    .query<{ name: string; pk: number }, []>(`PRAGMA table_xinfo(${q(table)})`)
    .all()
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name)

const references = (db: Database, table: string) =>
  db
    .query<{ table: string }, []>(`PRAGMA foreign_key_list(${q(table)})`)
    .all()
    .map((r) => r.table)

/**
 * Which tables merge early: those with a key that is not a file's integer key (a `WITHOUT ROWID`
 * key, or a primary key beside the rowid) whose referenced tenant tables merge early too.
 */
export function planMerge(target: Db, tables: readonly TenantTable[]): MergePlan {
  const byName = new Map(tables.map((t) => [t.name, t]))
  const early: MergePlan['early'] = []
  const done = new Set<string>()
  const left = [...tables]
  // Referenced tables first: a table goes once every tenant table it references has gone.
  for (let progress = true; progress; ) {
    progress = false
    for (let i = 0; i < left.length; i++) {
      const t = left[i]!
      const refs = references(target.sqlite, t.name).filter((name) => byName.has(name))
      if (refs.includes(t.name) || !refs.every((name) => done.has(name))) continue
      const identity = t.key ?? (t.rowidColumn ? [] : primaryKey(target.sqlite, t.name))
      if (!identity.length || t.name === 'outbox') continue
      early.push({ t, identity })
      done.add(t.name)
      left.splice(i--, 1)
      progress = true
    }
  }
  return { early, late: left }
}

/**
 * Before the final step: clears the tenant's leftover rows in the target, then copies the early
 * tables' rows from the staging file in write transactions of about `sliceMs`, while another
 * thread checkpoints the target. Checks each table against `expected` (the staging copy's counts).
 */
export function mergeEarly(
  target: Db,
  stagingPath: string,
  plan: MergePlan,
  opts: { tenantId: string; sliceMs: number; expected: Record<string, number> },
): Promise<Record<string, number>> {
  const { tenantId, sliceMs } = opts
  return withCheckpointer(target, async () => {
    await deleteRowsInSlices(target, tablesOf(target.sqlite), tenantId, sliceMs)
    const merged: Record<string, number> = {}
    const staging = new Database(stagingPath, { readonly: true, strict: true })
    try {
      for (const { t } of plan.early) {
        const list = t.columns.map(q).join(', ')
        const select = staging.prepare<Record<string, unknown>, [string]>(
          `SELECT ${list} FROM ${q(t.name)} WHERE tenant_id = ?`,
        )
        const rows = select.iterate(tenantId)
        const insert = `INSERT INTO ${q(t.name)} (${list}) VALUES (${t.columns.map(() => '?').join(', ')})`
        let n = 0
        for (let more = true; more; ) {
          await nextTurn()
          target.write(() => {
            const stmt = target.sqlite.query(insert)
            const start = performance.now()
            while (performance.now() - start < sliceMs) {
              const row = rows.next()
              if (row.done) {
                more = false
                return
              }
              stmt.run(...(t.columns.map((c) => row.value[c]) as never[]))
              n++
            }
          })
        }
        select.finalize()
        if (n !== (opts.expected[t.name] ?? 0)) {
          throw new MoveError(
            `${t.name}: ${opts.expected[t.name] ?? 0} rows to merge, ${n} merged into ${target.path}`,
          )
        }
        merged[t.name] = n
      }
      return merged
    } finally {
      // Statements a failure left open are finalized with it, so the file is let go at once.
      staging.close(true)
    }
  })
}

/** What the final step knows of an early merge (see `mergeStaging`). */
export interface EarlyMerge {
  plan: MergePlan
  /** The tenant's rows per early table in the target: merged early, then redone as logged. */
  merged: Record<string, number>
  /** The rows logged since: where they were in the target, and what they are now. */
  stale: Map<string, unknown[][]>
  fresh: Map<string, Record<string, unknown>[]>
  /** The staging copy's rows per table, every logged row applied. */
  counts: Record<string, number>
}

/**
 * Merges a closed staging copy into an existing target database in one transaction, in the final
 * step. Without an early merge (`early` null) every table's rows go, the tenant's leftover rows
 * there cleared first; integer keys that collide are renumbered as `renumbers` says, and it takes
 * time in proportion to the rows. After an early merge, only the late tables go whole; of the
 * early ones, the rows at the logged rows' old identities leave and the logged rows come again
 * from the staging copy, and each table's count is checked against `counts` (the staging copy's).
 */
export function mergeStaging({
  target,
  path,
  tables,
  tenantId,
  early = null,
}: {
  target: Db
  path: string
  tables: readonly TenantTable[]
  tenantId: string
  early?: EarlyMerge | null
}): void {
  const whole = early ? early.plan.late : tables
  const staging = new Database(path, { readonly: true, strict: true })
  const plans: Array<{ t: TenantTable; cols: string[] }> = []
  try {
    for (const t of whole) {
      const into = { target: target.sqlite, targetPath: target.path }
      const cols = renumbers({ source: staging, ...into, table: t, tenantId })
        ? t.columns.filter((c) => c !== t.rowidColumn)
        : t.columns
      plans.push({ t, cols })
    }
  } finally {
    staging.close()
  }
  const run = (sql: string, ...params: unknown[]) => {
    const stmt = target.sqlite.prepare(sql)
    try {
      return stmt.run(...(params as never[]))
    } finally {
      stmt.finalize()
    }
  }
  run('ATTACH DATABASE ? AS mmp_staging', path)
  try {
    target.write(() => {
      target.sqlite.run('PRAGMA defer_foreign_keys = ON')
      if (early) checkEarly(target, early, tenantId)
      for (const { t, cols } of plans) {
        run(`DELETE FROM main.${q(t.name)} WHERE tenant_id = ?`, tenantId)
        const list = cols.map(q).join(', ')
        const order = t.name === 'outbox' ? ' ORDER BY seq' : ''
        const n = run(
          `INSERT INTO main.${q(t.name)} (${list}) SELECT ${list} FROM mmp_staging.${q(t.name)} WHERE tenant_id = ?${order}`,
          tenantId,
        ).changes
        const landed = countOf(target.sqlite, t.name, tenantId)
        if (landed !== n) {
          throw new MoveError(`${t.name}: ${n} rows merged, ${landed} in ${target.path}`)
        }
      }
      if (hasInbox(target.sqlite)) {
        run(
          'INSERT OR IGNORE INTO main.inbox (consumer, event_id, handled_at) SELECT consumer, event_id, handled_at FROM mmp_staging.inbox',
        )
      }
    })
  } finally {
    run('DETACH DATABASE mmp_staging')
  }
}

/** The early tables' share of `mergeStaging`, inside its transaction. */
function checkEarly(target: Db, early: EarlyMerge, tenantId: string) {
  const { plan, stale, fresh } = early
  const changed = redoInTarget({ target, plan, stale, fresh, tenantId })
  for (const { t } of early.plan.early) {
    const landed = (early.merged[t.name] ?? 0) + (changed[t.name] ?? 0)
    if (landed !== (early.counts[t.name] ?? 0)) {
      throw new MoveError(
        `${t.name}: ${early.counts[t.name] ?? 0} rows in the copy, ${landed} merged into ${target.path}`,
      )
    }
  }
}
