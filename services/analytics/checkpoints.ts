import { type Checkpointer, startCheckpointer } from '../kernel/checkpointer.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'

/**
 * Tenant databases the consumer checkpoints from a thread of their own at once. A batch of 1,000
 * rows writes some 150 WAL pages; every sixth or seventh commit crossed SQLite's 1,000 and
 * copied the WAL into the database file and synced it inside the consumer's transaction. Each
 * thread holds two descriptors (its connection's file and WAL) and ends once its database has
 * been idle a second, so only the files being loaded right now have one; any other checkpoints
 * in its own commits as before.
 */
export const MAX_THREADS = 2

/**
 * Rows a message must carry to start a thread: a few rows a commit reach 1,000 WAL pages
 * seldom, and a thread started and ended for them costs more than the checkpoint it moves.
 */
export const MIN_ROWS = 100

interface Thread {
  db: Db
  checkpointer: Checkpointer
}

const threadsOf = new WeakMap<ServiceContext, Map<string, Thread>>()

/**
 * Before a write of the consumer (of `rows` rows): `db`'s checkpoints go to a thread (started
 * here if there is room), or come back to the connection once its thread has ended. Cheap when
 * nothing changes.
 */
export function checkpointOffThread(ctx: ServiceContext, db: Db, rows: number): void {
  let threads = threadsOf.get(ctx)
  if (!threads) {
    threads = new Map()
    threadsOf.set(ctx, threads)
  }
  let thread = threads.get(db.path)
  // Ended when idle, or for a handle the registry has since given out anew.
  if (thread && (thread.checkpointer.ended || thread.db !== db)) {
    void thread.checkpointer.stop()
    threads.delete(db.path)
    thread = undefined
  }
  if (!thread) {
    if (rows < MIN_ROWS) return
    for (const [path, t] of threads) {
      if (!t.checkpointer.ended) continue
      void t.checkpointer.stop()
      threads.delete(path)
    }
    if (threads.size >= MAX_THREADS) return
    const checkpointer = startCheckpointer(db, {
      name: 'an analytics database',
      log: ctx.log,
      endWhenIdle: true,
    })
    thread = { db, checkpointer }
    threads.set(db.path, thread)
  }
  thread.checkpointer.handOver()
}

/** Ends every thread the consumer started; their connections checkpoint by themselves again. */
export async function stopCheckpointers(ctx: ServiceContext): Promise<void> {
  const threads = threadsOf.get(ctx)
  if (!threads) return
  const stops = [...threads.values()].map((t) => t.checkpointer.stop())
  threads.clear()
  await Promise.all(stops)
}
