import type { Db } from '../kernel/db.ts'
import { RateLimited } from '../kernel/errors.ts'

/**
 * Slows password guessing. Each login reserves an attempt before its password is checked, in one
 * `BEGIN IMMEDIATE` transaction, so however many requests arrive at once at most `maxPerIp`
 * passwords per email+IP and `maxPerEmail` per email (over every IP) are evaluated in a window;
 * the rest get 429 + Retry-After until the window that refused them ends.
 *
 * A success gives its reservation back: the email+IP count starts over (the user proved who they
 * are from there) and the email's ceiling gets one back, so a user's own logins never lock them
 * out. Failures keep theirs. The per-IP key stops one address spraying an account; the ceiling
 * stops an attacker rotating addresses, at the price of locking the account for everyone while
 * it is under attack.
 */
export interface LoginThrottle {
  /** Counts one attempt for the email from `ip`, or throws RateLimited without counting it. */
  reserve(email: string, ip: string, nowMs: number): void
  /** The reserved attempt succeeded. */
  succeeded(email: string, ip: string): void
}

export interface ThrottleOptions {
  /** Attempts per email+IP in a window (`auth.login_max_failures`). */
  maxPerIp: number
  /** Attempts per email over every IP in a window (`auth.login_max_per_email`). */
  maxPerEmail: number
  windowMs: number
}

/** Rows of `login_failures`: the key of one address, and of the whole email. */
const ipKey = (email: string, ip: string) => `${email}|${ip}`
const emailKey = (email: string) => `${email}|*`

export function createLoginThrottle(db: Db, opts: ThrottleOptions): LoginThrottle {
  const read = db.sqlite.prepare<{ count: number; first_at: string }, [string]>(
    'SELECT count, first_at FROM login_failures WHERE key = ?',
  )
  // A window is fixed from its first attempt; an expired one starts over at this attempt.
  const bump = db.sqlite.prepare<unknown, [string, string, string]>(
    `INSERT INTO login_failures (key, count, first_at, last_at) VALUES (?1, 1, ?2, ?2)
     ON CONFLICT(key) DO UPDATE SET
       count = CASE WHEN first_at <= ?3 THEN 1 ELSE count + 1 END,
       first_at = CASE WHEN first_at <= ?3 THEN ?2 ELSE first_at END,
       last_at = ?2`,
  )
  const giveBack = db.sqlite.prepare<unknown, [string]>(
    'UPDATE login_failures SET count = MAX(count - 1, 0) WHERE key = ?',
  )
  const remove = db.sqlite.prepare<unknown, [string]>('DELETE FROM login_failures WHERE key = ?')
  const prune = db.sqlite.prepare<unknown, [string]>(
    'DELETE FROM login_failures WHERE last_at <= ?',
  )
  let lastPrune = 0

  /** Milliseconds until the key's window ends when it is full, else 0. */
  const lockedFor = (key: string, max: number, nowMs: number): number => {
    const row = read.get(key)
    if (!row || row.count < max) return 0
    return Math.max(0, Date.parse(row.first_at) + opts.windowMs - nowMs)
  }

  const reserveTx = db.sqlite.transaction((email: string, ip: string, nowMs: number) => {
    const wait = Math.max(
      lockedFor(ipKey(email, ip), opts.maxPerIp, nowMs),
      lockedFor(emailKey(email), opts.maxPerEmail, nowMs),
    )
    if (wait > 0) throw new RateLimited(wait / 1000)
    const now = new Date(nowMs).toISOString()
    const windowStart = new Date(nowMs - opts.windowMs).toISOString()
    bump.run(ipKey(email, ip), now, windowStart)
    bump.run(emailKey(email), now, windowStart)
    if (nowMs - lastPrune > opts.windowMs) {
      lastPrune = nowMs
      prune.run(windowStart)
    }
  })
  const succeededTx = db.sqlite.transaction((email: string, ip: string) => {
    remove.run(ipKey(email, ip))
    giveBack.run(emailKey(email))
  })

  return {
    reserve: (email, ip, nowMs) => reserveTx.immediate(email, ip, nowMs),
    succeeded: (email, ip) => succeededTx.immediate(email, ip),
  }
}
