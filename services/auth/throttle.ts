import type { Db } from '../kernel/db.ts'
import { RateLimited } from '../kernel/errors.ts'

/**
 * Slows password guessing per email+IP: after `maxFailures` failed logins inside `windowMs`,
 * further attempts (right or wrong) get 429 + Retry-After until the window ends. A success
 * clears the count. The key holds both parts so one attacker cannot lock a user out from
 * everywhere, and one IP cannot spray one account faster than the limit.
 */
export interface LoginThrottle {
  /** Throws RateLimited while the key is locked. */
  assertAllowed(email: string, ip: string, nowMs: number): void
  recordFailure(email: string, ip: string, nowMs: number): void
  clear(email: string, ip: string): void
}

export function createLoginThrottle(
  db: Db,
  opts: { maxFailures: number; windowMs: number },
): LoginThrottle {
  const keyOf = (email: string, ip: string) => `${email}|${ip}`
  const read = db.sqlite.prepare<{ count: number; first_at: string }, [string]>(
    'SELECT count, first_at FROM login_failures WHERE key = ?',
  )
  const upsert = db.sqlite.prepare(
    `INSERT INTO login_failures (key, count, first_at, last_at) VALUES (?1, 1, ?2, ?2)
     ON CONFLICT(key) DO UPDATE SET
       count = CASE WHEN first_at < ?3 THEN 1 ELSE count + 1 END,
       first_at = CASE WHEN first_at < ?3 THEN ?2 ELSE first_at END,
       last_at = ?2`,
  )
  const remove = db.sqlite.prepare('DELETE FROM login_failures WHERE key = ?')
  const prune = db.sqlite.prepare('DELETE FROM login_failures WHERE last_at < ?')
  let lastPrune = 0

  return {
    assertAllowed(email, ip, nowMs) {
      const row = read.get(keyOf(email, ip))
      if (!row || row.count < opts.maxFailures) return
      const endsAt = Date.parse(row.first_at) + opts.windowMs
      if (endsAt > nowMs) throw new RateLimited((endsAt - nowMs) / 1000)
    },
    recordFailure(email, ip, nowMs) {
      const now = new Date(nowMs).toISOString()
      const windowStart = new Date(nowMs - opts.windowMs).toISOString()
      upsert.run(keyOf(email, ip), now, windowStart)
      if (nowMs - lastPrune > opts.windowMs) {
        lastPrune = nowMs
        prune.run(windowStart)
      }
    },
    clear(email, ip) {
      remove.run(keyOf(email, ip))
    },
  }
}
