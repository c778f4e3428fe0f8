import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { isNull } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { paymentAlerts } from '../schema/payment/tables.ts'
import { shareTokensThrough } from '../services/payment/daraja-transport.ts'
import { goLiveChecks } from '../services/payment/go-live.ts'
import type { Config } from './config.ts'
import type { Check } from './doctor-check.ts'
import { productionDaraja } from './slices.ts'

/** The provider payment would call: mpesa.base_url, else the simulator. */
export function providerUrlOf(config: Config): { url: string; live: boolean } {
  const base = config.get<string | null>('mpesa.base_url')
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  const url =
    base ??
    config.get<string | null>('mpesa.simulator_url') ??
    `http://${host}:${config.ports.simulator}`
  return { url: url.replace(/\/+$/, ''), live: !!base }
}

/**
 * The go-live checks of `mmp doctor --daraja` (services/payment/go-live.ts, which the operator's
 * dashboard panel runs too), with the configured provider and credentials.
 */
export function darajaChecks(config: Config, now = new Date()): Promise<Check[]> {
  // The running platform's token (Daraja invalidates it whenever another is generated).
  shareTokensThrough(join(config.dataDir, 'run', 'daraja-token.json'))
  return goLiveChecks(
    {
      ...providerUrlOf(config),
      callbackBase: config.get<string | null>('mpesa.callback_base_url'),
      production: productionDaraja(
        config.get<string>('mpesa.environment'),
        config.get<string | null>('mpesa.base_url'),
      ),
      consumerKey: config.get<string>('mpesa.consumer_key'),
      consumerSecret: config.get<string>('mpesa.consumer_secret'),
      shortcode: config.get<string>('mpesa.shortcode'),
      passkey: config.get<string>('mpesa.passkey'),
    },
    now,
  )
}

/** The operator alerts about money the payment service raised (platform/payment.db). */
export function paymentAlertChecks(dataDir: string): Check[] {
  const file = join(dataDir, 'platform', 'payment.db')
  if (!existsSync(file)) return []
  let rows: Array<{ name: string; detail: string; last_at: string }> = []
  try {
    const db = new Database(file, { readonly: true })
    try {
      const t = paymentAlerts
      rows = drizzle(db)
        .select({ name: t.name, detail: t.detail, last_at: t.lastAt })
        .from(t)
        .where(isNull(t.clearedAt))
        .orderBy(t.name)
        .all()
    } finally {
      db.close()
    }
  } catch {
    return []
  }
  if (rows.length === 0)
    return [{ name: 'payment alerts', status: 'ok', detail: 'no alert about money' }]
  return rows.map((r) => ({
    name: `payment alert ${r.name}`,
    status: r.name === 'provider_credentials' ? 'fail' : 'warn',
    detail: `${r.detail} (last ${r.last_at})`,
    fix:
      r.name === 'provider_credentials'
        ? 'fix the M-Pesa settings, then check them with `mmp doctor --daraja`'
        : r.name === 'c2b_unverified'
          ? "check the shortcodes' initiator credentials and `mmp doctor --daraja`; list the confirmations with status unverified"
          : 'run `mmp payments reconcile`; see docs/daraja.md',
  }))
}
