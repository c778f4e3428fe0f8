import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'

import type { Migration } from '../../schema/kernel.ts'

export type { Migration }

export type Orm = BunSQLiteDatabase<Record<string, never>>

/**
 * An open SQLite database with the pragmas this platform relies on (DESIGN §13): WAL, a busy
 * timeout, foreign keys, and `BEGIN IMMEDIATE` for every write transaction.
 *
 * @example
 * const db = openDatabase(':memory:', { migrations, synchronous: 'FULL' })
 * db.write((orm) => orm.insert(payments).values(row).run())
 */
export interface Db {
  readonly path: string
  readonly sqlite: Database
  readonly orm: Orm
  /** Runs `fn` in a `BEGIN IMMEDIATE` transaction; nested calls become savepoints. */
  write<T>(fn: (orm: Orm) => T): T
  /** Called after a commit that wrote outbox rows (the relay listens here). */
  onEvents(listener: () => void): void
  /** Marks that the running transaction (or statement) wrote outbox rows. */
  markEvents(): void
  close(): void
  readonly closed: boolean
}

export interface OpenOptions {
  migrations: readonly Migration[]
  synchronous?: 'FULL' | 'NORMAL'
  busyTimeoutMs?: number
}

export function openDatabase(path: string, opts: OpenOptions): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const sqlite = new Database(path, { create: true, strict: true })
  sqlite.run(`PRAGMA busy_timeout = ${opts.busyTimeoutMs ?? 5000}`)
  sqlite.run('PRAGMA journal_mode = WAL')
  sqlite.run(`PRAGMA synchronous = ${opts.synchronous ?? 'NORMAL'}`)
  sqlite.run('PRAGMA foreign_keys = ON')
  applyMigrations(sqlite, opts.migrations)
  const orm = drizzle(sqlite) as Orm
  const listeners: Array<() => void> = []
  let depth = 0
  let eventsPending = false
  let closed = false

  const fire = () => {
    eventsPending = false
    for (const l of listeners) l()
  }

  return {
    path,
    sqlite,
    orm,
    write<T>(fn: (orm: Orm) => T): T {
      depth++
      try {
        const result = sqlite.transaction(() => fn(orm)).immediate()
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
      if (closed) return
      closed = true
      sqlite.close()
    },
    get closed() {
      return closed
    },
  }
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
