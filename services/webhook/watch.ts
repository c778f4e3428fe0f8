import type { Db } from '../kernel/db.ts'

/**
 * Calls `onChange` when another connection (another process, another thread) commits to `db`,
 * looking every `everyMs`: SQLite's data_version moves only for commits made elsewhere. Returns
 * the interval, for clearInterval; it does not keep the process alive.
 */
export function watchOtherWriters(
  db: Db,
  everyMs: number,
  onChange: () => void,
): ReturnType<typeof setInterval> {
  let seen = -1
  const timer = setInterval(() => {
    if (db.closed) return
    try {
      const v = db.sqlite
        .query<{ data_version: number }, []>('PRAGMA data_version')
        .get()!.data_version
      if (v !== seen && seen !== -1) onChange()
      seen = v
    } catch {
      // A file busy or released for a moment: the caller's slower sweep still finds the work.
    }
  }, everyMs)
  timer.unref?.()
  return timer
}
