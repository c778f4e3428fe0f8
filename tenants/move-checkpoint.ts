import type { Db } from './db.ts'

/**
 * Checkpoints one WAL database from a thread of its own while a tenant move deletes rows from it.
 *
 * Deleting a large tenant's rows from a shared file dirties thousands of pages; the connection
 * that commits them would checkpoint every 1,000 (copying pages into the database and syncing it,
 * 20-50 ms on a busy disk), on the thread that serves every tenant. While the move deletes, that
 * connection's automatic checkpoints are off and this thread checkpoints instead (PASSIVE: it
 * never waits for, nor holds up, readers and writers). The worker is made from a source string,
 * so the single executable needs no file of its own for it.
 */

const source = `
import { Database } from 'bun:sqlite'
let db = null
let running = false
let stopping = false
const step = () => {
  try {
    db.query('PRAGMA wal_checkpoint(PASSIVE)').get()
  } catch (err) {
    postMessage({ error: String(err && err.message || err) })
  }
  if (stopping) {
    db.close()
    postMessage({ stopped: true })
    return
  }
  setTimeout(step, 5)
}
self.onmessage = (e) => {
  if (e.data.path && !running) {
    running = true
    db = new Database(e.data.path)
    db.run('PRAGMA busy_timeout = 0')
    step()
  }
  if (e.data.stop) stopping = true
}
`

let url: string | null = null

export interface Checkpointer {
  /** Finishes a last checkpoint (everything committed so far is in the database file). */
  stop(): Promise<void>
}

/** Starts checkpointing `path` every few milliseconds until `stop`. */
export function startCheckpointer(path: string): Checkpointer {
  url ??= URL.createObjectURL(new Blob([source], { type: 'application/javascript' }))
  const worker = new Worker(url)
  let stopped: Promise<void> | null = null
  worker.postMessage({ path })
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        let fallback: ReturnType<typeof setTimeout> | undefined
        const done = () => {
          clearTimeout(fallback)
          worker.terminate()
          resolve()
        }
        worker.onmessage = (e: MessageEvent<{ stopped?: boolean }>) => {
          if (e.data.stopped) done()
        }
        worker.onerror = done
        // A worker that cannot answer must not hold the move up: the connection's own
        // checkpoints resume after it anyway.
        fallback = setTimeout(done, 5_000)
        fallback.unref?.()
        worker.postMessage({ stop: true })
      })
      return stopped
    },
  }
}

/**
 * Runs `work` (many short write transactions on `db`) with the connection's automatic checkpoints
 * off and a checkpointing thread on instead, so no commit of the event loop's thread copies pages
 * into the database and syncs it; both come back as they were when `work` settles.
 */
export async function withCheckpointer<T>(db: Db, work: () => Promise<T>): Promise<T> {
  const autocheckpoint =
    db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()
      ?.wal_autocheckpoint ?? 1000
  db.sqlite.run('PRAGMA wal_autocheckpoint = 0')
  const checkpointer = startCheckpointer(db.path)
  try {
    return await work()
  } finally {
    await checkpointer.stop()
    db.sqlite.run(`PRAGMA wal_autocheckpoint = ${autocheckpoint}`)
  }
}
