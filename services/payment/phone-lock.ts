import { payments } from '../../schema/payment/tables.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
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

/** Asked on every push (bench/payment.ts): prepared by hand, names from the table. */
const p = sqlNames(payments)
const OPEN_PROMPT_SQL = `SELECT ${selectList(payments, ['createdAt'])} FROM ${p.$}
  WHERE ${p.status} IN ('initiating', 'pending', 'unknown') AND ${p.createdAt} > ?3
  AND ${p.tenantId} = ?1 AND ${p.phoneNumber} = ?2 ORDER BY ${p.createdAt} DESC LIMIT 1`

/** Throws PHONE_BUSY when the tenant's last push to this phone is still open and recent. */
export function assertPhoneFree(db: Db, tid: string, phone: string, nowMs: number): void {
  const since = new Date(nowMs - PROMPT_HOLD_MS).toISOString()
  const open = db.sqlite
    .query<Pick<typeof payments.$inferSelect, 'createdAt'>, [string, string, string]>(
      OPEN_PROMPT_SQL,
    )
    .get(tid, phone, since)
  if (open) throw phoneBusy(phone, (Date.parse(open.createdAt) + PROMPT_HOLD_MS - nowMs) / 1000)
}
