import { and, eq, lt, sql } from 'drizzle-orm'
import { c2bPayments } from '../../schema/payment/tables.ts'
import { type BackoffStep, exponentialBackoff, nextWait } from '../kernel/backoff.ts'
import { getShortcode } from './c2b-shortcode-store.ts'
import type { C2bRow, C2bVerifier } from './c2b-verify.ts'
import type { PaymentDeps } from './deps.ts'
import type { ProviderRequests } from './provider-requests.ts'

/** The longest wait between two status queries of one confirmation. */
const MAX_WAIT_MS = 3600_000

export interface RequeryReport {
  /** Confirmations asked about again. */
  asked: number
  /** Confirmations given up on: marked `unverified` after `mpesa.c2b_verify_for_s`. */
  unverified: number
}

/**
 * When a `received` confirmation is due to be asked about again: the waits double from
 * `firstMs` (kernel backoff) counted from its arrival, and the next one due is the first that
 * falls after its last attempt (`updated_at`). Kept in the row alone, so a restart loses nothing.
 */
export function nextAskAt(row: Pick<C2bRow, 'createdAt' | 'updatedAt'>, firstMs: number): number {
  const policy = exponentialBackoff({ initialMs: firstMs, maxMs: Math.max(firstMs, MAX_WAIT_MS) })
  const last = Date.parse(row.updatedAt ?? row.createdAt)
  let at = Date.parse(row.createdAt)
  let step: BackoffStep | undefined
  while (at <= last) {
    step = nextWait(policy, step)
    at += step.duration
  }
  return at
}

/**
 * The second chance of C2B verification: a confirmation left `received` because its Transaction
 * Status query could not be made or answered (timeout, 5xx, token refused) is asked about again
 * with backoff, and after `mpesa.c2b_verify_for_s` marked `unverified` with the reason (counted,
 * as one nobody could check) and the operator alerted (`c2b_unverified`).
 */
export function createC2bRequery(
  deps: PaymentDeps,
  verifier: C2bVerifier,
  ask: ProviderRequests['ask'],
  firstMs: number,
) {
  /** Every `received` confirmation last touched before `before`, in every tenant database. */
  function stale(before: string): C2bRow[] {
    const out: C2bRow[] = []
    for (const file of deps.ctx.registry.existingTenantDatabases('payment')) {
      const db = deps.ctx.registry.openPath('payment', file, null)
      const t = c2bPayments
      const touched = sql`coalesce(${t.updatedAt}, ${t.createdAt})`
      out.push(
        ...(db.orm
          .select()
          .from(t)
          .where(and(eq(t.status, 'received'), lt(touched, before)))
          .all() as C2bRow[]),
      )
    }
    return out
  }

  async function askAgain(row: C2bRow): Promise<boolean> {
    const sc = getShortcode(deps.platform(), row.shortcode)
    // A released shortcode's initiator still answers for the payments made to it.
    const initiator = sc ? verifier.initiatorOf(sc) : null
    if (!initiator) return false
    await verifier.notYet(row.tenantId, row.transId, 'asking the provider again')
    await ask(
      row.tenantId,
      'verify',
      { transaction_id: row.transId, shortcode: row.shortcode, amount: null, c2b_id: row.id },
      { actorId: null, remarks: 'C2B confirmation check', initiator },
    ).catch((err) => verifier.notYet(row.tenantId, row.transId, (err as Error).message))
    return true
  }

  /** One pass over the confirmations still waiting for the provider. */
  async function run(): Promise<RequeryReport> {
    const report: RequeryReport = { asked: 0, unverified: 0 }
    const now = deps.ctx.clock.nowMs()
    const deadline = now - deps.cfg.c2bVerifyForS * 1000
    for (const row of stale(new Date(now - firstMs).toISOString())) {
      if (Date.parse(row.createdAt) <= deadline) {
        const why = row.statusReason?.replace(/^not verified yet: /, '') || 'no answer'
        const reason = `the provider could not confirm it within ${Math.round(deps.cfg.c2bVerifyForS / 60)} min (last: ${why})`
        if (await verifier.giveUp(row.tenantId, row.transId, reason)) report.unverified++
        continue
      }
      if (nextAskAt(row, firstMs) > now) continue
      if (await askAgain(row)) report.asked++
      else if (await verifier.giveUp(row.tenantId, row.transId, 'no initiator to verify with'))
        report.unverified++
    }
    if (report.unverified > 0)
      deps.alerts.raise(
        'c2b_unverified',
        `${report.unverified} C2B payment(s) could not be verified with M-Pesa in time and count as unverified; check the shortcode initiators and the provider (mmp doctor --daraja)`,
        report.unverified,
      )
    if (report.asked || report.unverified)
      deps.ctx.log.info('C2B verification retried', { ...report })
    return report
  }

  let running: Promise<RequeryReport> | null = null
  /** Runs once at a time. */
  return function requeryC2b(): Promise<RequeryReport> {
    running ??= run().finally(() => {
      running = null
    })
    return running
  }
}
