import { join } from 'node:path'
import { hasSiblings, type ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { type Alerts, createAlerts } from './alerts.ts'
import type { Daraja } from './daraja.ts'
import type { DarajaBusiness } from './daraja-business.ts'
import { createDarajaPull, type DarajaPull } from './daraja-pull.ts'
import { shareTokensThrough } from './daraja-transport.ts'
import { ownerState, SELF_OWNER } from './owner.ts'
import { businessFromSettings, type PaymentSettings, providerFromSettings } from './settings.ts'

/**
 * A provider call is over after this long at the latest (timeouts and retries included), so an
 * `initiating` payment older than this, or older than this process, has nobody waiting on it.
 */
export const PROVIDER_CALL_BUDGET_MS = 60_000

/** What the payment service's parts share: settings, provider, databases, in-flight calls. */
export interface PaymentDeps {
  ctx: ServiceContext
  cfg: PaymentSettings
  provider: Daraja
  /** C2B registration, transaction status, account balance and reversal. */
  business: DarajaBusiness
  /** The provider's own record of payments into the shortcode (reconciliation). */
  pull: DarajaPull
  /** Operator alerts about money (log, metric, platform table). */
  alerts: Alerts
  /** This process as the owner of the provider calls it makes (owner.ts); null: cannot tell. */
  owner: string | null
  /** Provider calls this process is making, by payment or disbursement id. */
  inflight: Map<string, Promise<unknown>>
  nowIso(): string
  platform(): Db
  tenantDb(tid: string): Db
  /** True when no provider call for this `initiating` row can still be running anywhere. */
  orphaned(id: string, createdAt: string, owner?: string | null): boolean
}

export function createDeps(
  ctx: ServiceContext<PaymentSettings>,
  provider?: Daraja,
  business?: DarajaBusiness,
): PaymentDeps {
  const cfg = ctx.settings
  // Workers share the provider's one live OAuth token (Daraja invalidates the previous one);
  // in run/, with the other live-process state a backup leaves out.
  shareTokensThrough(join(ctx.registry.dataDir, 'run', 'daraja-token.json'))
  // A call from before this process started can no longer be running, unless a sibling worker
  // made it: then only its age tells.
  const bootIso = hasSiblings(ctx) ? '' : ctx.clock.now().toISOString()
  const inflight = new Map<string, Promise<unknown>>()
  const tuned = new WeakSet<Db>()
  const deps: PaymentDeps = {
    ctx,
    cfg,
    provider: provider ?? providerFromSettings(ctx),
    business: business ?? businessFromSettings(ctx),
    pull: createDarajaPull({ baseUrl: cfg.providerUrl, ...cfg.credentials }),
    alerts: null as unknown as Alerts,
    owner: SELF_OWNER,
    inflight,
    nowIso: () => ctx.clock.now().toISOString(),
    /**
     * The platform index is a lookup aid (checkout id → tenant, open payments to reconcile); the
     * money itself is in the tenant databases, synced FULL. WAL with synchronous NORMAL survives a
     * process crash, so the index skips the fsync per commit that FULL costs.
     */
    platform() {
      const db = ctx.registry.platform('payment')
      if (!tuned.has(db)) {
        db.sqlite.run('PRAGMA synchronous = NORMAL')
        tuned.add(db)
      }
      return db
    },
    tenantDb: (tid) => ctx.registry.tenant('payment', tid),
    orphaned(id, createdAt, owner) {
      if (inflight.has(id)) return false
      // Its owner process is gone (a sibling worker, or this process's previous life): nobody waits.
      // This process's own rows go by age: a call may be just about to register as in flight.
      const state = owner && owner === SELF_OWNER ? 'unknown' : ownerState(owner ?? null)
      if (state === 'dead') return true
      if (state === 'alive') return false
      const budget = new Date(ctx.clock.nowMs() - PROVIDER_CALL_BUDGET_MS).toISOString()
      return createdAt < bootIso || createdAt < budget
    },
  }
  deps.alerts = createAlerts(deps)
  return deps
}
