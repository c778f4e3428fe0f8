import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import {
  type Entitlements,
  Entitlements as EntitlementsSchema,
  type Metric,
} from '../../schema/profiles.ts'
import type { Counter, Stamp } from '../../tenants/generation.ts'
import { replaceJson } from '../../tenants/json-file.ts'
import type { TenantRegistry } from '../../tenants/registry.ts'
import { AppError, Forbidden, LimitExceeded } from './errors.ts'

/**
 * Set by the billing service on its call to the payment service when a tenant pays an invoice,
 * so a suspended tenant can still pay its way out. The gateway drops it from client requests.
 */
export const PURPOSE_HEADER = 'x-mmp-purpose'
export const INVOICE_PAYMENT = 'invoice-payment'

export type { Entitlements, Metric }

type Entry = Stamp & { e: Entitlements | null }
/**
 * Entitlements read per registry: exact while the data dir's entitlements counter stands
 * (tenants/generation.ts), so a payment that ends a suspension is seen by every worker at once.
 */
const caches = new WeakMap<TenantRegistry, { entries: Map<string, Entry>; counter: Counter }>()
const cacheOf = (registry: TenantRegistry) => {
  let cache = caches.get(registry)
  if (!cache) {
    cache = { entries: new Map(), counter: registry.generation.entitlements }
    caches.set(registry, cache)
  }
  return cache
}

export function readEntitlements(registry: TenantRegistry, tenantId: string): Entitlements | null {
  const { entries, counter } = cacheOf(registry)
  const hit = entries.get(tenantId)
  const now = Date.now()
  if (counter.fresh(hit, now)) return hit.e
  const stamp = counter.stamp(now)
  const file = join(registry.tenantDir(tenantId), 'entitlements.json')
  const read: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null
  // Only billing writes the file; one that does not match its schema is a broken install.
  if (read !== null && !Value.Check(EntitlementsSchema, read))
    throw new Error(`tenants/${tenantId}/entitlements.json does not match the entitlements schema`)
  const e = read as Entitlements | null
  entries.set(tenantId, { ...stamp, e })
  return e
}

/** Billing only: atomically replaces the tenant's entitlements file. */
export function writeEntitlements(
  registry: TenantRegistry,
  tenantId: string,
  e: Entitlements,
): void {
  const dir = registry.tenantDir(tenantId)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'entitlements.json')
  replaceJson(file, e)
  const { entries, counter } = cacheOf(registry)
  counter.bump()
  entries.set(tenantId, { ...counter.stamp(Date.now()), e })
}

/**
 * The one shared plan check (DESIGN §10): a suspended subscription refuses writes with 402, and
 * adding `adding` of a metric past its hard limit is a 402 naming the limit. Reads pass while
 * suspended. Tenants billing has not written anything for yet pass.
 *
 * @example
 * assertEntitled(ctx.registry, tenantId, { write: true, metric: 'transactions', adding: rows.length })
 */
export function assertEntitled(
  registry: TenantRegistry,
  tenantId: string,
  need: {
    write?: boolean
    metric?: Metric
    adding?: number
    /**
     * The service's own count of the metric since the period start. Billing learns usage from
     * events a moment later; counting locally too keeps concurrent requests from overshooting.
     */
    ownUse?: (periodStart: string) => number
  },
): void {
  if (need.write && registry.placement(tenantId).status === 'suspended') {
    throw new Forbidden(
      `tenant ${tenantId} is suspended by the platform operator; reads still work`,
    )
  }
  const e = readEntitlements(registry, tenantId)
  if (!e) return
  if (need.write && (e.status === 'suspended' || e.status === 'canceled')) {
    throw new AppError(
      'SUBSCRIPTION_SUSPENDED',
      `the subscription of tenant ${tenantId} is ${e.status}; reads still work`,
      {
        extra: { subscription_status: e.status },
      },
    )
  }
  if (need.metric) {
    const limit = e.limits[need.metric]
    if (limit === null || limit === undefined) return
    const used = Math.max(e.used[need.metric] ?? 0, need.ownUse?.(e.period_start) ?? 0)
    if (used + (need.adding ?? 1) > limit) throw new LimitExceeded(need.metric, limit, used)
  }
}

/**
 * Billing only: every tenant's entitlements as its files hold them, for a part on its own data
 * dir that starts after billing wrote them (daemon/profiles.ts asks once at start).
 */
export function listEntitlements(
  registry: TenantRegistry,
): Array<{ tenant_id: string; entitlements: Entitlements }> {
  const root = join(registry.dataDir, 'tenants')
  if (!existsSync(root)) return []
  const out: Array<{ tenant_id: string; entitlements: Entitlements }> = []
  for (const id of readdirSync(root)) {
    if (!existsSync(join(root, id, 'entitlements.json'))) continue
    const e = readEntitlements(registry, id)
    if (e) out.push({ tenant_id: id, entitlements: e })
  }
  return out
}

/** Billing only: forgets a tenant's entitlements (the tenant is gone); never creates its folder. */
export function removeEntitlements(registry: TenantRegistry, tenantId: string): void {
  rmSync(join(registry.tenantDir(tenantId), 'entitlements.json'), { force: true })
  const { entries, counter } = cacheOf(registry)
  counter.bump()
  entries.delete(tenantId)
}
