import { TenantElsewhere } from './errors.ts'
import { PLATFORM_TENANT } from './tenant-id.ts'

/**
 * Which instance of a service owns a tenant, when the service runs as several instances that each
 * hold a subset of tenants (DESIGN §12). Rendezvous (highest random weight) hashing: every
 * instance URL gets a weight `xxHash64(url + '\n' + tenantId)` and the heaviest owns the tenant.
 * The gateway, the service client and each instance compute the same answer from the same
 * discovery list, so there is no placement map to keep in sync, and adding or removing an
 * instance moves only the tenants it wins or held (about 1/n), nobody else.
 *
 * The platform tenant, and requests that name no tenant, belong to the first instance listed: its
 * home. A service with one instance owns everything.
 *
 * @example
 * ownerOf('kiosk', ['http://10.0.0.2:8000', 'http://10.0.0.3:8000']) // one of them, always the same
 */
export function ownerOf(
  tenantId: string | undefined,
  instances: readonly string[],
  /** Where the tenant was moved to (`mmp tenant move --to`), which wins while it is listed. */
  placed?: string | undefined,
): string {
  if (instances.length === 0) throw new Error('no instance to place a tenant on')
  if (placed !== undefined && instances.includes(placed)) return placed
  if (instances.length === 1 || tenantId === undefined || tenantId === PLATFORM_TENANT)
    return instances[0]!
  let best = instances[0]!
  let bestWeight = weightOf(best, tenantId)
  for (let i = 1; i < instances.length; i++) {
    const url = instances[i]!
    const w = weightOf(url, tenantId)
    // Ties (never seen in practice) go to the smaller URL, so the list's order never matters.
    if (w > bestWeight || (w === bestWeight && url < best)) {
      best = url
      bestWeight = w
    }
  }
  return best
}

/**
 * A tenant's weight on an instance. xxHash64 is a published algorithm with fixed test vectors
 * (checked in the unit test), so every process and every version computes the same owner.
 */
export const weightOf = (instance: string, tenantId: string): bigint =>
  Bun.hash.xxHash64(`${instance}\n${tenantId}`)

/** What one instance of a service knows of the others: which tenants are its own. */
export interface TenantOwnership {
  /** This instance's base URL, as the discovery list names it. */
  readonly self: string
  readonly instances: readonly string[]
  /** Whether this instance holds the tenant's data and applies its events. */
  owns(tenantId: string): boolean
  /** The instance that does, as far as this one knows. */
  ownerOf?(tenantId: string): string
}

/**
 * The header of a 421 that names the instance owning the tenant, as the refusing instance knows
 * it (a move it took part in may not have reached the caller yet). The gateway follows it once
 * when discovery lists that instance, and never passes it on to a client.
 */
export const OWNER_HEADER = 'x-mmp-owner'

/**
 * The ownership of the instance `self` among `instances` (the service's discovery list). With one
 * instance or none it owns every tenant. With several, `self` must be one of them: an instance
 * that cannot tell which one it is would serve or refuse the wrong tenants, so it does not start.
 *
 * @example
 * const ownership = createOwnership(config.discovery.analytics, config.self.analytics)
 * ownership.owns('kiosk')
 */
export function createOwnership(
  instances: readonly string[],
  self: string,
  /** The instance a tenant was moved to, if it was (its profile's `instances`). */
  placed: (tenantId: string) => string | undefined = () => undefined,
): TenantOwnership {
  if (instances.length <= 1) return { self, instances, owns: () => true }
  if (!instances.includes(self))
    throw new Error(
      `this instance (${self}) is not in the service's instance list (${instances.join(', ')}); ` +
        'set instance.<service> (MMP_INSTANCE_<SERVICE>) to its URL as discovery lists it',
    )
  const owner = (tenantId: string) => ownerOf(tenantId, instances, placed(tenantId))
  return { self, instances, owns: (tenantId) => owner(tenantId) === self, ownerOf: owner }
}

/**
 * Refuses a request for a tenant another instance owns (421 TENANT_ELSEWHERE) rather than serving
 * it from an empty database. No ownership (one instance) passes everything.
 */
export function assertTenantHere(ownership: TenantOwnership | undefined, tenantId: string): void {
  if (ownership && !ownership.owns(tenantId))
    throw new TenantElsewhere(tenantId, ownership.ownerOf?.(tenantId))
}

/**
 * The tenant a request is about: the first `tenant_id` its path parameters, query or body name
 * (the operator acting for a tenant), otherwise the caller's own tenant. The gateway routes by the
 * same rule, so the instance it picks is the one that accepts.
 */
export function tenantOfCall(actorTenantId: string, sources: readonly unknown[]): string {
  for (const source of sources) {
    const named = (source as { tenant_id?: unknown } | null | undefined)?.tenant_id
    if (typeof named === 'string') return named
  }
  return actorTenantId
}
