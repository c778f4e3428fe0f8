import { and, count, eq, isNull, lt, min } from 'drizzle-orm'
import { paymentIndex } from '../../schema/payment/tables.ts'
import type { Db } from '../kernel/db.ts'
import type { createCallbacks } from './callbacks.ts'
import { metaOf } from './callbacks.ts'
import type { PaymentDeps } from './deps.ts'
import { grouped } from './grouped.ts'
import { type LostPush, settleLostPushes } from './lost-push.ts'
import type { IndexRow, ProviderIndex } from './provider-index.ts'
import { getEntity, getPayment, OPEN } from './rows.ts'
import { markUnknown } from './transitions.ts'

export interface ReconcileReport {
  checked: number
  settled: number
  still_pending: number
  failed_to_query: number
  /** Requests whose provider answer was lost and that nothing has settled yet. */
  unknown: number
}

const HOUR_MS = 3600_000

/** What the operator is alerted to about money (operator API, dashboard, `mmp doctor`). */
export function reconcileAlerts(deps: PaymentDeps) {
  const cutoff = new Date(deps.ctx.clock.nowMs() - HOUR_MS).toISOString()
  const t = paymentIndex
  const old = deps
    .platform()
    .orm.select({ n: count(), oldest: min(t.createdAt) })
    .from(t)
    .where(and(eq(t.open, 1), isNull(t.providerId), lt(t.createdAt, cutoff)))
    .get()
  return {
    alerts: deps.alerts.list(),
    unanswered_over_1h: old?.n ?? 0,
    oldest_unanswered_at: old?.oldest ?? null,
  }
}

type Callbacks = Pick<ReturnType<typeof createCallbacks>, 'confirmByQuery' | 'askLostDisbursements'>

/**
 * Reconciliation: requests whose answer was lost become `unknown` (never `failed`: the provider
 * may have them); STK payments pending too long are settled by an STK query; what cannot be
 * settled (unknown ones, B2C without a result) is reported, not guessed.
 */
export function createReconciler(deps: PaymentDeps, index: ProviderIndex, callbacks: Callbacks) {
  const confirm = callbacks.confirmByQuery
  let running: Promise<ReconcileReport> | null = null

  /**
   * Marks lost answers `unknown`, then looks each STK one up in the provider's own record (Pull
   * Transactions); raises the operator alert for those still unknown after an hour.
   */
  async function sweepUnanswered(report: ReconcileReport, closed: string[]) {
    const lost: LostPush[] = []
    const lostB2c: LostPush[] = []
    let overAnHour = 0
    const hourAgo = new Date(deps.ctx.clock.nowMs() - HOUR_MS).toISOString()
    for (const row of index.unanswered()) {
      const db = deps.tenantDb(row.tenantId)
      const cur = getEntity(db, row.kind, row.tenantId, row.ref)
      if (!cur || !OPEN.has(cur.status)) {
        closed.push(row.ref)
        continue
      }
      // A crash between recording the provider's id and indexing it: index it now.
      if (cur.providerId) {
        index.setProviderId(row.ref, cur.providerId)
        continue
      }
      if (cur.status === 'initiating' && deps.orphaned(row.ref, cur.createdAt, cur.owner)) {
        const c = {
          kind: row.kind,
          tid: row.tenantId,
          id: row.ref,
          actor: null,
          at: deps.nowIso(),
        }
        await grouped(db, () =>
          markUnknown(db, c, 'the provider answer was not recorded (process ended)'),
        )
      } else if (cur.status !== 'unknown') continue
      ;(row.kind === 'stk' ? lost : lostB2c).push({ tid: row.tenantId, ref: row.ref })
      report.unknown++
      if (cur.createdAt < hourAgo) overAnHour++
    }
    if (lost.length) {
      try {
        const settled = await settleLostPushes(deps, lost)
        report.settled += settled
        report.unknown -= settled
        overAnHour = Math.max(0, overAnHour - settled)
      } catch (err) {
        report.failed_to_query++
        deps.ctx.log.warn('reconciliation could not read the provider record of payments', {
          error: (err as Error).message,
        })
      }
    }
    if (lostB2c.length)
      await callbacks.askLostDisbursements(lostB2c).catch((err) => {
        report.failed_to_query++
        deps.ctx.log.warn('reconciliation could not ask about a lost disbursement', {
          error: (err as Error).message,
        })
      })
    if (overAnHour > 0)
      deps.alerts.raise(
        'payments_unknown',
        `${overAnHour} payment(s) have had no answer from M-Pesa for over an hour; check the provider (mmp doctor --daraja) and run \`mmp payments reconcile\``,
        overAnHour,
      )
    else deps.alerts.clear('payments_unknown')
  }

  async function queryPending(row: IndexRow, db: Db, report: ReconcileReport, closed: string[]) {
    const p = getPayment(db, row.tenantId, row.ref)
    if (!p || !OPEN.has(p.status)) {
      closed.push(row.ref)
      return
    }
    if (p.status !== 'pending') return
    report.checked++
    let meta = null
    if (p.callbackBody) {
      try {
        const cb = JSON.parse(p.callbackBody) as {
          Body?: { stkCallback?: { CallbackMetadata?: { Item?: unknown } } }
        }
        meta = metaOf(cb.Body?.stkCallback?.CallbackMetadata?.Item)
      } catch {}
    }
    try {
      if ((await confirm(db, p, meta, 'reconcile')) === 'settled') {
        report.settled++
        closed.push(row.ref)
      } else report.still_pending++
    } catch (err) {
      report.failed_to_query++
      deps.ctx.log.warn('reconciliation could not query a payment', {
        payment: p.id,
        tenant_id: row.tenantId,
        error: (err as Error).message,
      })
    }
  }

  async function run(olderThanS: number): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      checked: 0,
      settled: 0,
      still_pending: 0,
      failed_to_query: 0,
      unknown: 0,
    }
    const closed: string[] = []
    await sweepUnanswered(report, closed)
    const cutoff = new Date(deps.ctx.clock.nowMs() - olderThanS * 1000).toISOString()
    for (const row of index.open(cutoff)) {
      if (deps.inflight.has(row.ref) || !row.providerId) continue
      const db = deps.tenantDb(row.tenantId)
      if (row.kind === 'stk') {
        await queryPending(row, db, report, closed)
        continue
      }
      // B2C has no status query here: its result callback settles it.
      const d = getEntity(db, 'b2c', row.tenantId, row.ref)
      if (!d || !OPEN.has(d.status)) closed.push(row.ref)
    }
    index.close(closed)
    if (report.checked || report.unknown) deps.ctx.log.info('reconciliation ran', { ...report })
    return report
  }

  /** Runs once at a time; `olderThanS` defaults to `mpesa.reconcile_after_s`. */
  return function reconcile(opts: { olderThanS?: number } = {}): Promise<ReconcileReport> {
    running ??= run(opts.olderThanS ?? deps.cfg.reconcileAfterS).finally(() => {
      running = null
    })
    return running
  }
}
