import type { Db } from './db.ts'
import { type Logged, readCapture } from './move-capture.ts'
import { applyCaptured } from './move-copy.ts'
import type { Part } from './move-part.ts'
import { identitiesOf, redoInTarget, rowsOf } from './move-redo.ts'
import { nextTurn } from './move-tables.ts'

/**
 * What the moving tenant changed while its rows were copied, brought into the staging copy (and
 * into a target merged early) before the final step, so the final step, under the source's lock,
 * redoes only what changed since the last of these passes. A pass reads the log from where the
 * previous one stopped and the changed rows as they are now, without the lock: a row changed
 * again after that is logged again, and a later pass or the final step redoes it.
 */

/** Keys applied between two turns of the event loop. */
const CHUNK = 64
/** A pass that found fewer than this is the last before the final step. */
const FEW = 64
/** Passes at most: a tenant that writes faster than they keep up leaves the rest to the final step. */
const PASSES = 8

/**
 * Applies logged keys to the part's staging copy inside the caller's staging transaction and adds
 * the change to its counts. For a target merged early, returns where those rows were in it and
 * what they are now, for `redoInTarget`.
 */
export function applyLogged(part: Part, keys: Logged['keys'], tenantId: string) {
  const staging = part.staging!
  const merge = part.merge?.merged ? part.merge : null
  const stale = merge ? identitiesOf(staging, merge.plan, keys) : null
  const delta = applyCaptured({
    source: part.source.sqlite,
    staging,
    tables: part.tables,
    captured: keys,
    tenantId,
  })
  for (const [table, n] of Object.entries(delta)) {
    part.counts[table] = (part.counts[table] ?? 0) + n
  }
  return merge && stale ? { stale, fresh: rowsOf(staging, merge.plan, keys, tenantId) } : null
}

/**
 * Runs a redo in the target in a write transaction with its foreign keys unchecked. A pass reads
 * the changed rows over several turns, so two rows may come from before and after one write of
 * the tenant: a child of a parent not there yet, for one chunk. The final step redoes both from
 * one moment under the lock, and nobody reads the tenant there before. The connection's setting
 * comes back before anything else runs on this thread.
 */
function redoUnchecked<T>(target: Db, redo: () => T): T {
  const fk = target.sqlite.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()
  target.sqlite.run('PRAGMA foreign_keys = OFF')
  try {
    return target.write(redo)
  } finally {
    target.sqlite.run(`PRAGMA foreign_keys = ${fk?.foreign_keys ? 'ON' : 'OFF'}`)
  }
}

/** Splits logged keys into maps of at most `size` keys. */
function* chunks(keys: Logged['keys'], size: number): Generator<Logged['keys']> {
  let chunk: Logged['keys'] = new Map()
  let n = 0
  for (const [table, list] of keys) {
    for (const key of list) {
      const into = chunk.get(table) ?? []
      into.push(key)
      chunk.set(table, into)
      if (++n === size) {
        yield chunk
        chunk = new Map()
        n = 0
      }
    }
  }
  if (n) yield chunk
}

/** Runs passes over the log until one finds few changes; the event loop turns between chunks. */
export async function catchUp(part: Part, tenantId: string): Promise<void> {
  const staging = part.staging
  if (!staging) return
  for (let pass = 0; pass < PASSES; pass++) {
    const logged = readCapture(part.source, tenantId, part.tables, part.logged.at)
    if (!logged.count) return
    for (const chunk of chunks(logged.keys, CHUNK)) {
      await nextTurn()
      staging.run('BEGIN')
      let redo: ReturnType<typeof applyLogged>
      try {
        redo = applyLogged(part, chunk, tenantId)
        staging.run('COMMIT')
      } catch (err) {
        staging.run('ROLLBACK')
        throw err
      }
      const merge = part.merge
      if (redo && merge?.merged) {
        const changed = redoUnchecked(merge.target, () =>
          redoInTarget({ target: merge.target, plan: merge.plan, ...redo, tenantId }),
        )
        for (const [table, n] of Object.entries(changed)) {
          merge.merged[table] = (merge.merged[table] ?? 0) + n
        }
      }
    }
    part.logged.at = logged.last
    part.logged.before += logged.count
    if (logged.count < FEW) return
  }
}
