import { startCheckpointer } from './checkpointer.ts'
import type { Db } from './db.ts'

/**
 * Runs `work` (many short write transactions on `db`: a tenant move deleting or merging rows) with
 * the connection's automatic checkpoints off and a checkpointing thread on instead
 * (tenants/checkpointer.ts), so no commit of the event loop's thread copies pages into the
 * database and syncs it. Deleting a large tenant's rows from a shared file dirties thousands of
 * pages; the connection would checkpoint every 1,000 (20-50 ms on a busy disk), on the thread that
 * serves every tenant. The thread copies past that same 1,000 and looks every 5 ms, as often as
 * the move's slices commit. Both come back as they were when `work` settles, after a last
 * checkpoint: everything committed so far is in the database file.
 */
export async function withCheckpointer<T>(db: Db, work: () => Promise<T>): Promise<T> {
  const checkpointer = startCheckpointer(db, {
    name: 'a tenant move',
    everyMs: 5,
    capFrames: 1000,
    // Busy with the move's slices, never idle for long: its end empties the WAL.
    idleMs: 60_000,
  })
  try {
    return await work()
  } finally {
    await checkpointer.stop()
  }
}
