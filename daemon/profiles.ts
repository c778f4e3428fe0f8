import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { topics } from '../schema/events.ts'
import { type Entitlements, Isolation } from '../schema/profiles.ts'
import type { EventBus } from '../services/kernel/bus.ts'
import {
  readEntitlements,
  removeEntitlements,
  writeEntitlements,
} from '../services/kernel/entitlements.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import { perKeyQueue } from '../services/kernel/per-key-queue.ts'
import { retryUntilDone } from '../services/kernel/retry.ts'
import { subscribe } from '../services/kernel/subscribe.ts'
import { eraseTenantData, moveTenantData } from '../tenants/move.ts'
import {
  type Placement,
  placementFolder,
  SHARED,
  type TenantRegistry,
} from '../tenants/registry.ts'
import { platformRead } from './platform-sync.ts'

/** What a tenant looks like on `tenants.changed` and in the tenant service's list. */
interface ProfileSource {
  plan: string
  isolation: string
  status: string
  features: Record<string, boolean>
  timezone: string
  instances?: Record<string, string> | undefined
}

/** A profile newer than this, missing from the tenant service's list, may be a tenant being made. */
const ERASED_AFTER_MS = 5 * 60_000

/** The tenants this data dir holds a profile of. */
function profiledTenants(registry: TenantRegistry): string[] {
  const dir = join(registry.dataDir, 'tenants')
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((entry) => {
    if (entry === SHARED) return false
    try {
      return registry.hasProfile(entry)
    } catch {
      return false
    }
  })
}

/** The profile a part keeps of what the tenant service says of a tenant. */
const profileOf = (t: ProfileSource, asOf: string): Placement | null =>
  Value.Check(Isolation, t.isolation)
    ? {
        isolation: t.isolation,
        plan: t.plan,
        status: t.status,
        features: t.features,
        timezone: t.timezone,
        ...(t.instances && Object.keys(t.instances).length > 0 ? { instances: t.instances } : {}),
        as_of: asOf,
      }
    : null

/**
 * On a part without the tenant service on its data dir: asks the tenant service about a tenant
 * a request names that this part has not heard of yet (its `tenants.changed` still on the way) and
 * keeps the profile when the tenant exists. A tenant it does not know is not asked about again
 * for two seconds. Every worker has one (it writes only a profile that is missing).
 *
 * @example
 * ctx.learnTenant = learnTenantsFrom({ registry, client })
 */
export function learnTenantsFrom(opts: {
  registry: TenantRegistry
  client: ServiceClient
}): (tenantId: string) => Promise<boolean> {
  const { registry } = opts
  const unknown = new Map<string, number>()
  return async (tenantId) => {
    if (existsSync(join(registry.dataDir, 'platform', 'tenant.db'))) return false
    if (Date.now() - (unknown.get(tenantId) ?? 0) < 2000) return false
    try {
      const t = await platformRead<ProfileSource & { updated_at: string }>(
        opts.client,
        'tenant',
        `/api/v1/tenants/${encodeURIComponent(tenantId)}`,
        Date.now() + 5_000,
      )
      const p = profileOf(t, t.updated_at)
      if (!p) return false
      if (!registry.hasProfile(tenantId)) registry.setPlacement(tenantId, p)
      return true
    } catch {
      if (unknown.size > 10_000) unknown.clear()
      unknown.set(tenantId, Date.now())
      return false
    }
  }
}

/**
 * A part on its own data dir (DESIGN §12, another host) keeps its own copy of what it needs to
 * know about tenants instead of reading the owners' files:
 * - the profile (`tenants/<id>/placement.json`: tier, plan, status, features, zone) from
 *   `mobilemoney.tenants.changed`, and once at start from the tenant service's list (asked as the
 *   platform, `platform-sync`), retried while the tenant service comes up;
 * - the entitlements (`tenants/<id>/entitlements.json`) from `mobilemoney.entitlements.changed`.
 *
 * When a tenant's tier changes, this part moves its own rows (the databases of the services it
 * runs) as the tenant service moves them on its data dir, reads working meanwhile. An erased tenant's rows and files go too.
 * Each profile keeps the time of what it was built from (`as_of`), so an older event arriving late
 * changes nothing. Where the tenant service (or billing) shares this data dir, its own file is
 * the truth and nothing is copied.
 */
export async function followProfiles(opts: {
  registry: TenantRegistry
  bus: EventBus
  client: ServiceClient
  /** The services of this process: their databases hold the tenant rows that move. */
  services: readonly string[]
  log: Logger
}): Promise<{ stop(): void; loaded: Promise<void> }> {
  const { registry, log } = opts
  const owns = (service: string) => existsSync(join(registry.dataDir, 'platform', `${service}.db`))
  /** One change at a time per tenant: a move finishes before the next profile is looked at. */
  const serial = perKeyQueue()

  const applyProfile = async (tenantId: string, source: ProfileSource | null, asOf: string) => {
    if (owns('tenant')) return
    const known = registry.hasProfile(tenantId) ? registry.placement(tenantId) : null
    if (known?.as_of && known.as_of > asOf) return
    if (!source) {
      if (!known) return
      eraseTenantData(registry, { tenantId, placement: known, services: opts.services })
      registry.removePlacement(tenantId)
      log.info('tenant erased here after the tenant service erased it', { tenant_id: tenantId })
      return
    }
    const next = profileOf(source, asOf)
    if (!next) return
    const from = known && placementFolder(registry.dataDir, known, tenantId)
    if (known && from !== placementFolder(registry.dataDir, next, tenantId)) {
      const report = await moveTenantData(registry, {
        tenantId,
        from: known,
        to: next,
        services: opts.services,
        switchPlacement: () => registry.setPlacement(tenantId, next),
      })
      log.info('tenant rows moved here to follow its tier', {
        tenant_id: tenantId,
        isolation: next.isolation,
        rows: report.total,
      })
    } else {
      registry.setPlacement(tenantId, next)
    }
  }

  await subscribe(opts, 'profiles', topics.tenantsChanged, (event) =>
    serial(event.tenant_id, () =>
      applyProfile(
        event.tenant_id,
        event.data.change === 'deleted' ? null : event.data,
        event.occurred_at,
      ),
    ),
  )
  /** Billing's entitlements of a tenant, unless this part holds newer ones already. */
  const keepEntitlements = (tenantId: string, e: Entitlements) => {
    const held = readEntitlements(registry, tenantId)
    if (held && held.updated_at > e.updated_at) return
    writeEntitlements(registry, tenantId, e)
  }
  await subscribe(opts, 'entitlements', topics.entitlementsChanged, (event) => {
    if (owns('billing')) return
    const e = event.data.entitlements as Entitlements | null
    if (!e) return removeEntitlements(registry, event.tenant_id)
    keepEntitlements(event.tenant_id, e)
  })

  let stopped = false
  const profilesLoaded = retryUntilDone(
    async () => {
      if (owns('tenant')) return
      const askedAt = Date.now()
      const list = await platformRead<{
        data: Array<ProfileSource & { id: string; updated_at: string }>
      }>(opts.client, 'tenant', '/api/v1/tenants')
      // Dated by the tenant service's own clock, as its events are.
      for (const t of list.data) await serial(t.id, () => applyProfile(t.id, t, t.updated_at))
      // A tenant this part knows that the whole list lacks was erased while its event was lost
      // (the part away, its broker session gone). One learnt in the last minutes may be a
      // creation still under way, which the list does not show yet: it is left alone.
      const listed = new Set(list.data.map((t) => t.id))
      const before = new Date(askedAt - ERASED_AFTER_MS).toISOString()
      let erased = 0
      for (const id of profiledTenants(registry)) {
        if (listed.has(id)) continue
        await serial(id, () => applyProfile(id, null, before))
        if (!registry.hasProfile(id)) erased++
      }
      log.info('tenant profiles loaded from the tenant service', {
        tenants: list.data.length,
        erased,
      })
    },
    {
      waiting: 'waiting for the tenant service to load tenant profiles',
      log,
      logEvery: 20,
      stopped: () => stopped,
    },
  )
  // A part that starts after billing wrote a tenant's entitlements would otherwise know nothing
  // of its limits or suspension until billing's next change of that tenant.
  const entitlementsLoaded = retryUntilDone(
    async () => {
      if (owns('billing')) return
      const list = await platformRead<{
        data: Array<{ tenant_id: string; entitlements: Entitlements }>
      }>(opts.client, 'billing', '/internal/entitlements')
      for (const { tenant_id, entitlements } of list.data) keepEntitlements(tenant_id, entitlements)
      log.info('tenant entitlements loaded from billing', { tenants: list.data.length })
    },
    {
      waiting: 'waiting for billing to load tenant entitlements',
      log,
      logEvery: 20,
      stopped: () => stopped,
    },
  )
  return {
    loaded: Promise.all([profilesLoaded, entitlementsLoaded]).then(() => {}),
    stop() {
      stopped = true
    },
  }
}
