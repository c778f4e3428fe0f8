import { readFileSync } from 'node:fs'

/** Descriptors one open WAL database holds: the file, its `-wal` and its `-shm`. */
export const FDS_PER_DATABASE = 3

/**
 * Databases a process may hold outside the registry's cap: the background lease and a tier
 * move's lease (run/leases.db), the shared rate limits (run/rate-limits.db), the WAL
 * checkpointers' own connections (webhook queue, analytics consumer: two), the simulator's file
 * and a backup's or a move's short-lived copy.
 */
export const DATABASES_OUTSIDE_REGISTRY = 8

/** The soft RLIMIT_NOFILE of this process, from /proc/self/limits; null where unreadable. */
export function openFilesLimit(limitsText?: string): number | null {
  let text = limitsText
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8')
    } catch {
      return null
    }
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1]
  if (!soft) return null
  return soft === 'unlimited' ? null : Number(soft)
}

/**
 * How a process shares its open-files limit out (DESIGN §15). The limit is per process: each
 * worker of `mmp serve --workers N` has its own and budgets it alone. A quarter of it (at least
 * 128) is kept for everything that is not a database: an idle worker already holds about 45
 * (listening and broker sockets, the runtime, logs) and every client connection takes one more.
 * The rest is for database files: first those held outside the registry (their own connections),
 * then the registry's cap, shared by every service of the process.
 *
 * @example
 * fileBudget(256, 1024) // { reserve: 256, databases: 768, registry: 248 }
 * fileBudget(256, 256)  // { reserve: 128, databases: 128, registry: 34 }
 */
export function fileBudget(
  configured: number,
  limit: number | null,
): { reserve: number; databases: number; registry: number } {
  if (limit === null) return { reserve: 0, databases: Infinity, registry: configured }
  const reserve = Math.max(128, Math.ceil(limit / 4))
  const databases = Math.max(0, limit - reserve)
  const own = Math.floor(databases / FDS_PER_DATABASE) - DATABASES_OUTSIDE_REGISTRY
  return { reserve, databases, registry: Math.max(8, Math.min(configured, own)) }
}

/**
 * The cap on open databases the registry of one process keeps: the configured cap, lowered to
 * what the open-files budget holds (`fileBudget`). Never below 8.
 */
export function databaseCap(configured: number, limit: number | null): number {
  return fileBudget(configured, limit).registry
}

/**
 * The smallest open-files limit whose budget (`fileBudget`) lets the registry of one process hold
 * `databases` open at once: what `mmp doctor` advises, from the same formula the daemon caps by.
 *
 * @example
 * openFilesFor(42) // 278: fileBudget(42, 278).registry is 42, fileBudget(42, 277).registry 41
 */
export function openFilesFor(databases: number): number {
  const files = (databases + DATABASES_OUTSIDE_REGISTRY) * FDS_PER_DATABASE
  // The reserve is 128 up to a limit of 512 and a quarter of the limit above it.
  let limit = files + 128 <= 512 ? files + 128 : Math.ceil((files * 4) / 3)
  while (limit > 1 && fileBudget(databases, limit - 1).registry >= databases) limit--
  while (fileBudget(databases, limit).registry < databases) limit++
  return limit
}
