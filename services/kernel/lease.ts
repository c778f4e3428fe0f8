import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { processAlive, processStart } from '../../tenants/process-alive.ts'

/**
 * A named lease shared by the worker processes of one `mmp serve --workers N` (one data dir, one
 * host): whoever holds it runs the background work (relays, consumers, dispatcher, reconciler,
 * billing cycle, backups) and renews it; the others wait. The holder's pid is stored with it, so
 * a holder that died (SIGKILL) is replaced at the next try instead of after the time-to-live; a
 * holder that stopped renewing (a hung process) is replaced once the lease expires. Whoever finds
 * its lease taken by someone else must stop at once (`lost`): two holders never run side by side
 * for longer than one renewal. The tenant service takes one per tenant while it changes a plan
 * (services/tenant/upgrade.ts), so workers never move one tenant's data side by side.
 *
 * @example
 * const lease = openLease(join(dataDir, 'run', 'leases.db'), 'background', { ttlMs: 3000 })
 * if (lease.tryAcquire()) startBackgroundWork()
 */
export interface Lease {
  /** Takes the lease when it is free, expired or held by a dead process; true when held now. */
  tryAcquire(): boolean
  /** Extends a held lease; false when someone else holds it now (stop the work at once). */
  renew(): boolean
  /** Gives a held lease up (graceful stop), so another worker takes over without waiting. */
  release(): void
  /** The pid holding the lease now, or null. */
  holder(): number | null
  close(): void
}

export function openLease(
  path: string,
  name: string,
  opts: {
    ttlMs?: number
    pid?: number
    now?: () => number
    alive?: (pid: number) => boolean
    /** When a process started (`processStart`): a holder's pid alive again in another process is dead. */
    startOf?: (pid: number) => number | null
  } = {},
): Lease {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const db = new Database(path, { create: true, strict: true })
  db.run('PRAGMA busy_timeout = 2000')
  db.run('PRAGMA journal_mode = WAL')
  db.run(
    'CREATE TABLE IF NOT EXISTS lease (name TEXT PRIMARY KEY, pid INTEGER NOT NULL, expires_at INTEGER NOT NULL, started INTEGER)',
  )
  // A file an older version made has no start times: its holders are judged by pid alone.
  const columns = db.query<{ name: string }, []>('PRAGMA table_info(lease)').all()
  if (!columns.some((c) => c.name === 'started')) {
    try {
      db.run('ALTER TABLE lease ADD COLUMN started INTEGER')
    } catch {
      // Another worker added it just now.
    }
  }
  const ttl = opts.ttlMs ?? 3000
  const pid = opts.pid ?? process.pid
  const now = opts.now ?? Date.now
  const alive = opts.alive ?? processAlive
  const startOf = opts.startOf ?? processStart
  const started = startOf(pid)
  const read = db.query<{ pid: number; expires_at: number; started: number | null }, [string]>(
    'SELECT pid, expires_at, started FROM lease WHERE name = ?',
  )
  const write = db.query(
    'INSERT OR REPLACE INTO lease (name, pid, expires_at, started) VALUES (?, ?, ?, ?)',
  )
  /** Whether the holder of `row` still runs: its pid alive, and not given to another process since. */
  const holderRuns = (row: { pid: number; started: number | null }) => {
    if (!alive(row.pid)) return false
    if (row.started === null) return true
    const now = startOf(row.pid)
    return now === null || now === row.started
  }
  const drop = db.query('DELETE FROM lease WHERE name = ? AND pid = ?')

  const take = (mustHold: boolean): boolean =>
    db
      .transaction(() => {
        const row = read.get(name)
        const at = now()
        const mine = row?.pid === pid && (row.started === null || row.started === started)
        if (mustHold && !mine) return false
        if (row && !mine && row.expires_at > at && holderRuns(row)) return false
        write.run(name, pid, at + ttl, started)
        return true
      })
      .immediate()

  return {
    tryAcquire: () => take(false),
    renew: () => take(true),
    release() {
      drop.run(name, pid)
    },
    holder: () => read.get(name)?.pid ?? null,
    close: () => db.close(),
  }
}
