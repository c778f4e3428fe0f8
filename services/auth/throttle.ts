import { eq, lte, sql } from 'drizzle-orm'
import { loginFailures } from '../../schema/auth/tables.ts'
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
  const t = loginFailures
  // A window is fixed from its first attempt; an expired one starts over at this attempt.
  const bump = (key: string, now: string, windowStart: string) =>
    db.orm
      .insert(t)
      .values({ key, count: 1, firstAt: now, lastAt: now })
      .onConflictDoUpdate({
        target: t.key,
        set: {
          count: sql`CASE WHEN ${t.firstAt} <= ${windowStart} THEN 1 ELSE ${t.count} + 1 END`,
          firstAt: sql`CASE WHEN ${t.firstAt} <= ${windowStart} THEN ${now} ELSE ${t.firstAt} END`,
          lastAt: now,
        },
      })
      .run()
  let lastPrune = 0

  /** Milliseconds until the key's window ends when it is full, else 0. */
  const lockedFor = (key: string, max: number, nowMs: number): number => {
    const row = db.orm
      .select({ count: t.count, firstAt: t.firstAt })
      .from(t)
      .where(eq(t.key, key))
      .get()
    if (!row || row.count < max) return 0
    return Math.max(0, Date.parse(row.firstAt) + opts.windowMs - nowMs)
  }

  const reserveTx = db.sqlite.transaction((email: string, ip: string, nowMs: number) => {
    const wait = Math.max(
      lockedFor(ipKey(email, ip), opts.maxPerIp, nowMs),
      lockedFor(emailKey(email), opts.maxPerEmail, nowMs),
    )
    if (wait > 0) throw new RateLimited(wait / 1000)
    const now = new Date(nowMs).toISOString()
    const windowStart = new Date(nowMs - opts.windowMs).toISOString()
    bump(ipKey(email, ip), now, windowStart)
    bump(emailKey(email), now, windowStart)
    if (nowMs - lastPrune > opts.windowMs) {
      lastPrune = nowMs
      db.orm.delete(t).where(lte(t.lastAt, windowStart)).run()
    }
  })
  const succeededTx = db.sqlite.transaction((email: string, ip: string) => {
    db.orm
      .delete(t)
      .where(eq(t.key, ipKey(email, ip)))
      .run()
    db.orm
      .update(t)
      .set({ count: sql`MAX(${t.count} - 1, 0)` })
      .where(eq(t.key, emailKey(email)))
      .run()
  })

  return {
    reserve: (email, ip, nowMs) => reserveTx.immediate(email, ip, nowMs),
    succeeded: (email, ip) => succeededTx.immediate(email, ip),
  }
}
