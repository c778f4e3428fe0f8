import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'

import type { Migration } from '../schema/kernel.ts'

export type { Migration }

export type Orm = BunSQLiteDatabase<Record<string, never>>

/**
 * An open SQLite database with the pragmas this platform relies on (DESIGN §13): WAL, a busy
 * timeout, foreign keys, and `BEGIN IMMEDIATE` for every write transaction.
 *
 * A handle may be *released* by the registry's LRU (its file descriptors closed at once) and is
 * reopened transparently on its next use, so code that holds a `Db` across an `await` keeps
 * working; `close()` ends it for good.
 *
 * @example
 * const db = openDatabase(':memory:', { migrations, synchronous: 'FULL' })
 * db.write((orm) => orm.insert(payments).values(row).run())
 */
export interface Db {
  readonly path: string
  /** The connection; reopens a released handle. Statements prepared on it die with a release. */
  readonly sqlite: Database
  readonly orm: Orm
  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction; nested calls become savepoints. */
  write<T>(fn: (orm: Orm) => T): T
  /** Called after a commit that wrote outbox rows (the relay listens here). */
  onEvents(listener: () => void): void
  /** Marks that the running transaction (or statement) wrote outbox rows. */
  markEvents(): void
  /** Closes for good: a later use throws. */
  close(): void
  /** No connection is open right now (released or closed). */
  readonly closed: boolean
  /** Closed for good (not merely released). */
  readonly gone: boolean
  /** A transaction is open or someone holds the handle: it must not be released now. */
  readonly busy: boolean
  /** Keeps the handle from being released until the returned function is called. */
  hold(): () => void
  /** Closes the connection now (descriptors freed) but lets the next use reopen it. */
  release(): boolean
}

export interface OpenOptions {
  migrations: readonly Migration[]
  synchronous?: 'FULL' | 'NORMAL'
  busyTimeoutMs?: number
  /** Asked before a released handle is opened again: an erased file must not come back. */
  mayReopen?: () => boolean
  /** Called when a released handle is opened again by a use (the registry counts it again). */
  onReopen?: (db: Db) => void
}

function connect(path: string, opts: OpenOptions): Database {
  const sqlite = new Database(path, { create: true, strict: true })
  try {
    sqlite.run(`PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}`)
    sqlite.run('PRAGMA journal_mode = WAL')
    sqlite.run(`PRAGMA synchronous = ${opts.synchronous ?? 'NORMAL'}`)
    sqlite.run('PRAGMA foreign_keys = ON')
    applyMigrations(sqlite, opts.migrations)
  } catch (err) {
    closeNow(sqlite)
    throw err
  }
  return sqlite
}

/**
 * bun:sqlite's `close()` is sqlite3_close_v2: the file stays open while any prepared statement
 * lives (drizzle's, `query()`'s cache), until the garbage collector runs. `close(true)` finalizes
 * them and frees the descriptors (3 per WAL database) at once.
 */
function closeNow(sqlite: Database): void {
  try {
    sqlite.close(true)
  } catch {
    sqlite.close(false)
  }
}

export function openDatabase(path: string, opts: OpenOptions): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  let sqlite: Database | null = connect(path, opts)
  let orm: Orm = drizzle(sqlite) as Orm
  const listeners: Array<() => void> = []
  let depth = 0
  let holds = 0
  let eventsPending = false
  let gone = false

  const fire = () => {
    eventsPending = false
    for (const l of listeners) l()
  }

  const live = (): Database => {
    if (sqlite) return sqlite
    if (gone || opts.mayReopen?.() === false) {
      gone = true
      throw new Error(`database ${path} has been closed`)
    }
    sqlite = connect(path, opts)
    orm = drizzle(sqlite) as Orm
    opts.onReopen?.(db)
    return sqlite
  }

  const db: Db = {
    path,
    get sqlite() {
      return live()
    },
    get orm() {
      live()
      return orm
    },
    write<T>(fn: (orm: Orm) => T): T {
      const conn = live()
      depth++
      try {
        const result = conn.transaction(() => fn(orm)).immediate()
        if (depth === 1 && eventsPending) queueMicrotask(fire)
        return result
      } catch (err) {
        if (depth === 1) eventsPending = false
        throw err
      } finally {
        depth--
      }
    },
    onEvents(listener) {
      listeners.push(listener)
    },
    markEvents() {
      eventsPending = true
      if (depth === 0) queueMicrotask(fire)
    },
    close() {
      gone = true
      if (sqlite) closeNow(sqlite)
      sqlite = null
    },
    release() {
      if (!sqlite || path === ':memory:' || db.busy) return false
      closeNow(sqlite)
      sqlite = null
      return true
    },
    hold() {
      holds++
      let done = false
      return () => {
        if (done) return
        done = true
        holds--
      }
    },
    get busy() {
      return depth > 0 || holds > 0 || (sqlite?.inTransaction ?? false)
    },
    get closed() {
      return sqlite === null
    },
    get gone() {
      return gone
    },
  }
  return db
}

/** Applies migrations not yet recorded in `__migrations`, each in its own transaction. */
export function applyMigrations(sqlite: Database, migrations: readonly Migration[]): void {
  sqlite.run(
    'CREATE TABLE IF NOT EXISTS __migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)',
  )
  const applied = new Set(
    sqlite
      .query<{ tag: string }, []>('SELECT tag FROM __migrations')
      .all()
      .map((r) => r.tag),
  )
  for (const m of migrations) {
    if (applied.has(m.tag)) continue
    sqlite
      .transaction(() => {
        // Another process (a sibling worker, the CLI) may have applied it since the look above.
        if (sqlite.query('SELECT 1 FROM __migrations WHERE tag = ?').get(m.tag)) return
        for (const stmt of m.sql.split('--> statement-breakpoint')) {
          if (stmt.trim()) sqlite.run(stmt)
        }
        sqlite.run('INSERT INTO __migrations (tag, applied_at) VALUES (?, ?)', [
          m.tag,
          new Date().toISOString(),
        ])
      })
      .immediate()
  }
}
