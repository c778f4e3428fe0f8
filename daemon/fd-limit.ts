import { readFileSync } from 'node:fs'

/** Descriptors one open WAL database holds: the file, its `-wal` and its `-shm`. */
export const FDS_PER_DATABASE = 3

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
 * The cap on open databases the process can actually hold (DESIGN §15): the configured cap, lowered
 * so that the databases' descriptors fit under the soft open-files limit with a quarter of it (at
 * least 128) left for the rest: an idle `mmp serve` already holds about 45 (listening and broker
 * sockets, the runtime, logs), and every client connection takes one more. Never below 8.
 *
 * @example
 * databaseCap(256, 1024) // 256: 768 descriptors for databases, 256 for the rest
 * databaseCap(256, 256)  // 42
 */
export function databaseCap(configured: number, limit: number | null): number {
  if (limit === null) return configured
  const reserve = Math.max(128, Math.ceil(limit / 4))
  return Math.max(8, Math.min(configured, Math.floor((limit - reserve) / FDS_PER_DATABASE)))
}
