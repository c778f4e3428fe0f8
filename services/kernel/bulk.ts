import type { Db } from './db.ts'

/**
 * What a bulk write on a database (a statement import: chunk after chunk, each committed with its
 * outbox events) holds back until it settles, so that it costs about what its rows cost:
 * - the relay's drains: a drain woken by every commit would read, publish and mark sent the
 *   chunks' events while the import still writes them, on the same thread;
 * - SQLite's WAL checkpoints: past 1,000 WAL pages every commit copies the WAL into the database
 *   file and syncs it, and a 100,000-row import writes some 15,000 pages. The WAL keeps
 *   what was committed either way; the first commit after the bulk checkpoints it all at once,
 *   and the file, which SQLite reuses but never shrinks, is truncated once the drain is done.
 *
 * Used by `Relay.bulk` (events.ts), which is what services call.
 */
export interface BulkGate {
  /** Whether a drain of `db` may run now; when not, one is owed at the end of its bulk write. */
  admits(db: Db): boolean
  /**
   * Runs `write` as a bulk write on `db`. When the last one on it ends, on the next turn of the
   * loop (the caller's response is on its way by then): `drain` if a drain waited, then the WAL
   * is shrunk.
   */
  run<T>(db: Db, write: () => Promise<T>, drain: () => Promise<void>): Promise<T>
}

interface Bulk {
  count: number
  /** When a drain last went through (or the bulk began). */
  since: number
  /** A drain was asked for and held. */
  owed: boolean
  /** The handle whose connection's checkpoint threshold was `pages` before the bulk. */
  db: Db
  pages: number | null
}

/**
 * A drain asked for during a bulk write still goes through once `holdMs` passed since the last
 * (or since the bulk began), so events other writers commit meanwhile wait that long at most.
 *
 * @example
 * const bulks = createBulkGate(2000)
 * if (bulks.admits(db)) drain(db)
 * await bulks.run(db, () => importChunks(db), () => drain(db))
 */
export function createBulkGate(holdMs: number): BulkGate {
  /** By file: every handle of one file shares its outbox. */
  const bulks = new Map<string, Bulk>()
  return {
    admits(db) {
      const bulk = bulks.get(db.path)
      if (!bulk) return true
      if (Date.now() - bulk.since < holdMs) {
        bulk.owed = true
        return false
      }
      bulk.since = Date.now()
      bulk.owed = false
      return true
    },
    async run(db, write, drain) {
      let bulk = bulks.get(db.path)
      if (!bulk) {
        bulk = { count: 0, since: Date.now(), owed: false, db, pages: holdCheckpoints(db) }
        bulks.set(db.path, bulk)
      }
      bulk.count++
      // The registry must not close the handle midway: the threshold is the connection's.
      const release = db.hold()
      try {
        return await write()
      } finally {
        release()
        if (--bulk.count === 0) {
          bulks.delete(db.path)
          if (bulk.pages !== null && !bulk.db.closed) {
            bulk.db.sqlite.run(`PRAGMA wal_autocheckpoint = ${bulk.pages}`)
          }
          const { owed } = bulk
          setImmediate(() => {
            void (owed ? drain() : Promise.resolve()).then(() => {
              if (!bulks.has(db.path)) shrinkWal(bulk.db)
            })
          })
        }
      }
    },
  }
}

/** Turns automatic checkpoints off on the connection; the threshold it had, or null if none. */
function holdCheckpoints(db: Db): number | null {
  const row = db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()
  if (!row || row.wal_autocheckpoint <= 0) return null
  db.sqlite.run('PRAGMA wal_autocheckpoint = 0')
  return row.wal_autocheckpoint
}

/**
 * Checkpoints the WAL and truncates its file when no other connection reads or writes the
 * database at that moment; it never waits for one (a busy timeout here would stall the loop), and
 * never throws: a WAL left as it was is only disk space, shrunk after the next bulk write.
 */
function shrinkWal(db: Db): void {
  try {
    if (db.closed || db.path === ':memory:' || db.sqlite.inTransaction) return
    const conn = db.sqlite
    const wait = conn.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()?.timeout ?? 0
    conn.run('PRAGMA busy_timeout = 0')
    try {
      conn.run('PRAGMA wal_checkpoint(TRUNCATE)')
    } finally {
      conn.run(`PRAGMA busy_timeout = ${wait}`)
    }
  } catch {
    // Busy or closed meanwhile: see above.
  }
}
