import { and, eq, gt, isNotNull, min } from 'drizzle-orm'
import { payments } from '../../schema/payment/tables.ts'
import type { PulledTransaction } from './daraja-pull.ts'
import type { PaymentDeps } from './deps.ts'
import { PROMPT_HOLD_MS } from './phone-lock.ts'
import { getPayment, OPEN, type PaymentRow } from './rows.ts'
import { settle } from './settle.ts'

/**
 * A push whose answer was lost (the process died between the provider taking it and the record
 * of its answer, and its callback never came) has no CheckoutRequestID to query. It is found in
 * the provider's own record instead (Pull Transactions): the payment into the shortcode with the
 * account reference the platform sent (stored before sending), the same phone and amount, made
 * while its prompt could be answered (and before M-Pesa took another push to that phone). Found: `success` with the receipt. Not found once the prompt can no
 * longer be answered: `failed`, nothing was charged. Never a payment already final.
 */
export interface LostPush {
  tid: string
  ref: string
}

/** How long after the push a missing payment means none will come (the prompt has expired). */
export const lostAfterMs = (deps: PaymentDeps) =>
  Math.max(deps.cfg.reconcileAfterS * 1000, PROMPT_HOLD_MS)

/** The phone as the provider shows it (full, masked `2547 ***** 126`, or national) matches ours. */
export function samePhone(shown: string, ours: string): boolean {
  const s = shown.replace(/\s+/g, '')
  if (!s) return true
  if (s.includes('*')) {
    const [head = '', tail = ''] = s.split(/\*+/)
    return ours.startsWith(head) && ours.endsWith(tail)
  }
  const digits = s.replace(/\D/g, '')
  return digits.length >= 8 && ours.endsWith(digits.slice(-9))
}

/** How long after a push its payment can complete: the prompt's life, and some slack. */
export const COMPLETES_WITHIN_MS = PROMPT_HOLD_MS + 15_000

/**
 * The provider's transaction for this push, or null. `taken`: receipts other payments hold.
 * `until`: when M-Pesa took another push to the same phone (its prompt was over by then).
 */
export function matchOf(
  p: PaymentRow,
  txns: PulledTransaction[],
  taken: (receipt: string) => boolean,
  until = Number.POSITIVE_INFINITY,
): PulledTransaction | null {
  const started = Date.parse(p.createdAt) - 60_000
  const ends = Math.min(Date.parse(p.createdAt) + COMPLETES_WITHIN_MS, until)
  const ref = p.accountReference.trim().toLowerCase()
  const found = txns
    .filter(
      (t) =>
        t.billReference.trim().toLowerCase() === ref &&
        Math.round(t.amount * 100) === p.amountCents &&
        t.at.getTime() >= started &&
        t.at.getTime() <= ends &&
        samePhone(t.msisdn, p.phoneNumber) &&
        !taken(t.receipt),
    )
    .sort((a, b) => a.at.getTime() - b.at.getTime())
  return found[0] ?? null
}

/** Settles what it can; returns how many it settled. Throws when the provider cannot be asked. */
export async function settleLostPushes(deps: PaymentDeps, lost: LostPush[]): Promise<number> {
  const now = deps.ctx.clock.nowMs()
  const rows = lost
    .map((l) => getPayment(deps.tenantDb(l.tid), l.tid, l.ref))
    .filter(
      (p): p is PaymentRow =>
        !!p &&
        OPEN.has(p.status) &&
        !p.checkoutRequestId &&
        Date.parse(p.createdAt) <= now - deps.cfg.reconcileAfterS * 1000,
    )
  if (rows.length === 0) return 0
  const earliest = Math.min(...rows.map((p) => Date.parse(p.createdAt)))
  const from = Math.max(earliest - 60_000, now - 48 * 3600_000)
  const txns = await deps.pull.transactions(new Date(from), new Date(now))
  const used = new Set<string>()
  let settled = 0
  for (const p of rows) {
    const db = deps.tenantDb(p.tenantId)
    const pay = payments
    const taken = (receipt: string) =>
      used.has(receipt) ||
      !!db.orm
        .select({ id: pay.id })
        .from(pay)
        .where(eq(pay.mpesaReceiptNumber, receipt))
        .limit(1)
        .get()
    // The next push to the same phone the provider took: the lost one was answered before it.
    const next = db.orm
      .select({ at: min(pay.createdAt) })
      .from(pay)
      .where(
        and(
          eq(pay.tenantId, p.tenantId),
          eq(pay.phoneNumber, p.phoneNumber),
          gt(pay.createdAt, p.createdAt),
          isNotNull(pay.checkoutRequestId),
        ),
      )
      .get()?.at
    const t = matchOf(p, txns, taken, next ? Date.parse(next) : undefined)
    if (t) {
      used.add(t.receipt)
      const done = await settle(
        deps,
        { db, kind: 'stk', tid: p.tenantId, id: p.id },
        {
          code: 0,
          desc: "found in M-Pesa's own record of payments (Pull Transactions)",
          receipt: t.receipt,
          transactionDate: t.at.toISOString(),
          counterpartyName: null,
          via: 'pull transactions',
        },
      )
      if (done) settled++
      continue
    }
    if (Date.parse(p.createdAt) > now - lostAfterMs(deps)) continue
    const done = await settle(
      deps,
      { db, kind: 'stk', tid: p.tenantId, id: p.id },
      {
        code: null,
        desc: 'M-Pesa has no payment for this request in its own record (Pull Transactions): nothing was charged',
        receipt: null,
        transactionDate: null,
        counterpartyName: null,
        via: 'pull transactions',
      },
    )
    if (done) settled++
  }
  return settled
}
