import type { Db } from '../kernel/db.ts'
import { AppError } from '../kernel/errors.ts'

/**
 * How long a push holds its phone: Daraja refuses a second prompt while one is open ("Unable to
 * lock subscriber"; its docs: wait at least a minute between requests), so the platform answers
 * a second push to the same phone of the same tenant at once, without asking the provider.
 */
export const PROMPT_HOLD_MS = 60_000

/** 409 PHONE_BUSY with Retry-After: a prompt is already open (or may be) on that phone. */
export function phoneBusy(phone: string, retryAfterS: number, detail?: string): AppError {
  return new AppError(
    'PHONE_BUSY',
    detail ??
      `an M-Pesa prompt is already open on ${phone}; ask again once the customer answered it or it expired`,
    { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterS))) } },
  )
}

/** Throws PHONE_BUSY when the tenant's last push to this phone is still open and recent. */
export function assertPhoneFree(db: Db, tid: string, phone: string, nowMs: number): void {
  const since = new Date(nowMs - PROMPT_HOLD_MS).toISOString()
  const open = db.sqlite
    .query<{ created_at: string }, [string, string, string]>(
      `SELECT created_at FROM payments WHERE status IN ('initiating', 'pending', 'unknown')
       AND created_at > ?3 AND tenant_id = ?1 AND phone_number = ?2
       ORDER BY created_at DESC LIMIT 1`,
    )
    .get(tid, phone, since)
  if (open) throw phoneBusy(phone, (Date.parse(open.created_at) + PROMPT_HOLD_MS - nowMs) / 1000)
}
