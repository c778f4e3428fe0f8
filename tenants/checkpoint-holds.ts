import type { Database } from 'bun:sqlite'

/**
 * What the checkpointing threads (tenants/checkpointer.ts) share on the owner's side: who holds
 * each connection's automatic checkpoints, and how a failing checkpoint is logged.
 */

/** Where the thread's trouble goes; a kernel Logger is one. */
export interface CheckpointLog {
  warn(message: string, fields: Record<string, unknown>): void
  debug(message: string, fields: Record<string, unknown>): void
}

/**
 * Who holds each connection's automatic checkpoints, and the threshold it had before the first:
 * two threads may checkpoint one file (the analytics consumer's, a tenant move's), and whichever
 * ends first must neither give them back under the other nor leave them off for good.
 */
const holds = new WeakMap<Database, { count: number; threshold: number }>()

export function hold(conn: Database): void {
  let h = holds.get(conn)
  if (!h) {
    const pages =
      conn.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()
        ?.wal_autocheckpoint ?? 0
    // Off already (a bulk write holds them): SQLite's own threshold is what comes back.
    h = { count: 0, threshold: pages > 0 ? pages : 1000 }
    holds.set(conn, h)
    conn.run('PRAGMA wal_autocheckpoint = 0')
  }
  h.count++
}

export function release(conn: Database, open: boolean): void {
  const h = holds.get(conn)
  if (!h || --h.count > 0) return
  holds.delete(conn)
  if (open) conn.run(`PRAGMA wal_autocheckpoint = ${h.threshold}`)
}

/** How often a checkpoint that keeps failing (a lock another process holds) is logged again. */
const FAILURE_LOG_EVERY_MS = 60_000

/**
 * The thread tries every few ms: a failure that persists is logged once, then once a minute with
 * how many attempts failed meanwhile, not on every attempt.
 */
export function failureLog(name: string, log?: CheckpointLog, now: () => number = Date.now) {
  let loggedAt = Number.NEGATIVE_INFINITY
  let since = 0
  return {
    failed(error: string) {
      since++
      if (now() - loggedAt < FAILURE_LOG_EVERY_MS) return
      log?.warn(`${name} checkpoint failed; the next one retries`, { error, failures: since })
      loggedAt = now()
      since = 0
    },
  }
}
