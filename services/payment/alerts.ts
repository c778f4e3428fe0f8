import type { paymentAlerts } from '../../schema/payment/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { counter, gauge } from '../kernel/metrics.ts'
import type { Narrow, SqlRow } from './sql-row.ts'

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

/** An alert in force, as the operator API shows it (`payment_alerts` without `cleared_at`). */
export type AlertRow = Narrow<Omit<SqlRow<typeof paymentAlerts>, 'cleared_at'>, { name: AlertName }>

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
      db.write(() =>
        db.sqlite
          .query(
            `INSERT INTO payment_alerts (name, detail, count, first_at, last_at, cleared_at)
             VALUES (?1, ?2, 1, ?3, ?3, NULL)
             ON CONFLICT (name) DO UPDATE SET detail = ?2, last_at = ?3,
               count = CASE WHEN cleared_at IS NULL THEN count + 1 ELSE 1 END,
               first_at = CASE WHEN cleared_at IS NULL THEN first_at ELSE ?3 END,
               cleared_at = NULL`,
          )
          .run(name, detail, at),
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
      const open = db.sqlite
        .query<{ n: number }, [string]>(
          'SELECT count(*) AS n FROM payment_alerts WHERE name = ? AND cleared_at IS NULL',
        )
        .get(name)
      if (!open?.n) return
      db.write(() =>
        db.sqlite
          .query('UPDATE payment_alerts SET cleared_at = ? WHERE name = ? AND cleared_at IS NULL')
          .run(deps.nowIso(), name),
      )
      deps.ctx.log.info('payment alert cleared', { alert: name })
    },
    /** The alerts in force. */
    list(): AlertRow[] {
      return deps
        .platform()
        .sqlite.query<AlertRow, []>(
          'SELECT name, detail, count, first_at, last_at FROM payment_alerts WHERE cleared_at IS NULL ORDER BY name',
        )
        .all()
    },
  }
}

export type Alerts = ReturnType<typeof createAlerts>
