import { oneShotWorker } from '../tenants/one-shot-worker.ts'

/**
 * A consistent copy of one live database, taken on a thread of its own: `VACUUM INTO` reads one
 * snapshot while writers go on, then the copy's rows are counted per table (SQLite's own tables
 * left out) for the manifest. Neither runs on the thread that serves requests: a database of a
 * few hundred MB takes seconds to copy, and `POST /backups` runs inside the platform.
 */
const source = `
import { Database } from 'bun:sqlite'
import { setPriority } from 'node:os'
self.onmessage = (e) => {
  const { source, dest } = e.data
  try {
    // This thread only: on Linux a priority set with pid 0 is the calling thread's.
    setPriority(10)
    // Read-write without create: a read-only handle cannot open a WAL file whose -shm is missing.
    const db = new Database(source, { readwrite: true, create: false })
    try {
      db.run('PRAGMA busy_timeout = 10000')
      db.run('VACUUM INTO ?', [dest])
    } finally {
      db.close(true)
    }
    const copy = new Database(dest, { readonly: true })
    const tables = {}
    try {
      const names = copy
        .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all()
        .map((r) => r.name)
        .sort((a, b) => a.localeCompare(b))
      for (const name of names)
        tables[name] = copy.query('SELECT count(*) AS n FROM "' + name.replaceAll('"', '""') + '"').get().n
    } finally {
      copy.close(true)
    }
    postMessage({ tables })
  } catch (err) {
    postMessage({ error: String((err && err.message) || err) })
  }
}
`

const snapshotThread = oneShotWorker<{ tables: Record<string, number> }>(
  source,
  'the backup thread',
)

/** Copies `source` into `dest` (which must not exist); resolves to the copy's rows per table. */
export async function snapshotDatabase(
  source: string,
  dest: string,
): Promise<Record<string, number>> {
  return (await snapshotThread({ source, dest })).tables
}
