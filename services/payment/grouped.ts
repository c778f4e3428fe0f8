import type { Db } from '../kernel/db.ts'

interface Pending {
  fn: () => unknown
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

const queues = new WeakMap<Db, Pending[]>()

/**
 * Group commit (DESIGN §14: one fsync per commit with synchronous FULL is the cost of money): writes
 * asked for in the same turn of the event loop run in one transaction, each in its own savepoint,
 * so one failing write rolls back alone. Resolves once the shared transaction committed.
 *
 * @example
 * const moved = await grouped(db, () => db.sqlite.query('UPDATE ...').run(...).changes)
 */
export function grouped<T>(db: Db, fn: () => T): Promise<T> {
  let queue = queues.get(db)
  if (!queue) {
    queue = []
    queues.set(db, queue)
    setImmediate(() => flush(db))
  }
  return new Promise<T>((resolve, reject) =>
    queue.push({ fn, resolve: resolve as (v: unknown) => void, reject }),
  )
}

function flush(db: Db): void {
  const queue = queues.get(db) ?? []
  queues.delete(db)
  if (queue.length === 0) return
  const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
  try {
    db.write(() => {
      for (const item of queue) {
        try {
          outcomes.push({ ok: true, value: db.write(() => item.fn()) })
        } catch (error) {
          outcomes.push({ ok: false, error })
        }
      }
    })
  } catch (error) {
    for (const item of queue) item.reject(error)
    return
  }
  queue.forEach((item, i) => {
    const o = outcomes[i]!
    if (o.ok) item.resolve(o.value)
    else item.reject(o.error)
  })
}
