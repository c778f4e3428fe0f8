import { and, asc, count, eq, isNull, sql } from 'drizzle-orm'
import { paymentAlerts } from '../../schema/payment/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { counter, gauge } from '../kernel/metrics.ts'

/**
 * Operator alerts about money, kept in the platform database (`payment_alerts`) so the operator
 * API, the dashboard and `mmp doctor` read the same thing, and each raised with an error log line
 * and a Prometheus metric:
 *
 * - `provider_credentials`: the provider refused the platform's own credentials or shortcode
 *   ("Wrong credentials", "Merchant does not exist", OAuth refused). Every payment fails until
 *   the operator fixes the settings; cleared by the next push the provider accepts.
 * - `provider_setup`: M-Pesa took a push but refused it with result 2028 (the shortcode is not
 *   set up for that transaction type); cleared by the next payment that succeeds.
 * - `payments_unknown`: payments whose outcome is still unknown an hour after they started;
 *   cleared when reconciliation finds none.
 * - `c2b_unverified`: C2B confirmations M-Pesa could not be asked about within
 *   `mpesa.c2b_verify_for_s` now count as unverified; cleared by the next one it verifies.
 */
export type AlertName =
  | 'provider_credentials'
  | 'provider_setup'
  | 'payments_unknown'
  | 'c2b_unverified'

const t = paymentAlerts

/** An alert in force, as the operator API shows it (`payment_alerts` without `cleared_at`). */
const IN_FORCE = {
  name: sql<AlertName>`${t.name}`,
  detail: t.detail,
  count: t.count,
  first_at: t.firstAt,
  last_at: t.lastAt,
}

const raised = counter(
  'mmp_payment_alerts_total',
  'Operator alerts about money raised (provider credentials refused, payments unknown for an hour)',
  ['alert'],
)
const unknownGauge = gauge(
  'mmp_payments_unknown_over_1h',
  'Payments whose outcome is still unknown an hour after they started',
)
const credentialsGauge = gauge(
  'mmp_payment_provider_credentials_refused',
  '1 while the payment provider refuses the platform credentials or shortcode',
)

/** What alerts need of the payment service (deps.ts gives it). */
export interface AlertDeps {
  ctx: ServiceContext<unknown>
  platform(): Db
  nowIso(): string
}

export function createAlerts(deps: AlertDeps) {
  // Alerts this process knows to be clear, and when it last looked (a sibling may raise one).
  const clearSince = new Map<AlertName, number>()
  const setGauge = (name: AlertName, v: number) => {
    if (name === 'payments_unknown') unknownGauge.set(v)
    else if (name === 'provider_credentials') credentialsGauge.set(v)
  }
  return {
    raise(name: AlertName, detail: string, value = 1): void {
      const db = deps.platform()
      const at = deps.nowIso()
      // A raised alert counts on from its first time; a cleared one starts again.
      db.write((orm) =>
        orm
          .insert(t)
          .values({ name, detail, count: 1, firstAt: at, lastAt: at, clearedAt: null })
          .onConflictDoUpdate({
            target: t.name,
            set: {
              detail,
              lastAt: at,
              count: sql`CASE WHEN ${t.clearedAt} IS NULL THEN ${t.count} + 1 ELSE 1 END`,
              firstAt: sql`CASE WHEN ${t.clearedAt} IS NULL THEN ${t.firstAt} ELSE ${at} END`,
              clearedAt: null,
            },
          })
          .run(),
      )
      clearSince.delete(name)
      raised.inc({ alert: name })
      setGauge(name, value)
      deps.ctx.log.error(`payment alert: ${detail}`, { alert: name })
    },
    clear(name: AlertName): void {
      const now = deps.ctx.clock.nowMs()
      if (now - (clearSince.get(name) ?? -Infinity) < 30_000) return
      clearSince.set(name, now)
      setGauge(name, 0)
      const db = deps.platform()
      const inForce = and(eq(t.name, name), isNull(t.clearedAt))
      const open = db.orm.select({ n: count() }).from(t).where(inForce).get()
      if (!open?.n) return
      db.write((orm) => orm.update(t).set({ clearedAt: deps.nowIso() }).where(inForce).run())
      deps.ctx.log.info('payment alert cleared', { alert: name })
    },
    /** The alerts in force. */
    list() {
      return deps
        .platform()
        .orm.select(IN_FORCE)
        .from(t)
        .where(isNull(t.clearedAt))
        .orderBy(asc(t.name))
        .all()
    },
  }
}

export type Alerts = ReturnType<typeof createAlerts>
