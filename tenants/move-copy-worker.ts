import { oneShotWorker } from './one-shot-worker.ts'

/**
 * A thread that copies a tenant's rows from a snapshot of a source database into a staging file,
 * so the copy's statements (one `INSERT … SELECT` per table, its counts and the file's sync) never
 * run on the thread that serves every tenant. The worker gets its statements ready-made and runs
 * them on a connection of its own to the staging file, with the source attached: one transaction,
 * so every table is read from the same snapshot. The thread runs at a lower priority (nice 10),
 * so on a busy machine the threads that serve requests get a core before it. It holds no lock
 * anyone waits for (a read snapshot, and a file only the move knows), so nothing waits on it in
 * turn. It is made from a source string, as the checkpointer (tenants/checkpointer.ts) is, so the
 * single executable needs no file of its own for it.
 */

export interface CopyJob {
  sourcePath: string
  stagingPath: string
  tenantId: string
  inboxSince: string
  /** Per table: the copy (`?` the tenant) and the tenant's row count in the source and the copy. */
  tables: Array<{ name: string; copy: string; countSource: string; countCopy: string }>
  /** Whether both files have an inbox, and the copy of its recent records (`?` the oldest time). */
  inbox: { check: string; copy: string }
}

export interface CopiedTable {
  name: string
  /** Rows the copy inserted. */
  copied: number
  /** The tenant's rows in the snapshot of the source. */
  expected: number
  /** The tenant's rows in the staging file after the copy. */
  landed: number
}

const source = `
import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, openSync } from 'node:fs'
import { setPriority } from 'node:os'
self.onmessage = (e) => {
  const job = e.data
  let db = null
  try {
    // This thread only: on Linux a priority set with pid 0 is the calling thread's.
    setPriority(10)
    db = new Database(job.stagingPath)
    db.run('PRAGMA main.journal_mode = MEMORY')
    db.run('PRAGMA main.synchronous = OFF')
    db.run('PRAGMA busy_timeout = 5000')
    db.run('ATTACH DATABASE ? AS mmp_source', [job.sourcePath])
    db.run('BEGIN')
    const tables = []
    for (const t of job.tables) {
      const copied = db.prepare(t.copy).run(job.tenantId).changes
      const expected = db.prepare(t.countSource).get(job.tenantId).n
      const landed = db.prepare(t.countCopy).get(job.tenantId).n
      tables.push({ name: t.name, copied, expected, landed })
    }
    if (db.prepare(job.inbox.check).get()?.ok) db.prepare(job.inbox.copy).run(job.inboxSince)
    db.run('COMMIT')
    db.run('DETACH DATABASE mmp_source')
    db.close(true)
    db = null
    const fd = openSync(job.stagingPath, 'r+')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    postMessage({ tables })
  } catch (err) {
    try {
      db?.close(true)
    } catch {}
    postMessage({ error: String((err && err.message) || err) })
  }
}
`

const copyThread = oneShotWorker<{ tables: CopiedTable[] }>(source, 'the copy thread')

/** Runs a copy on a thread of its own; resolves when the staging file is written and synced. */
export async function runCopyJob(job: CopyJob): Promise<CopiedTable[]> {
  return (await copyThread(job)).tables
}
