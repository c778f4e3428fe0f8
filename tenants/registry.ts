import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import type { TenantProfile } from '../schema/profiles.ts'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db, Migration } from './db.ts'
import { type ProfileGeneration, profileGeneration } from './generation.ts'
import { createHandles, type HandleOptions } from './registry-handles.ts'
import { createPlacements } from './registry-placements.ts'

/** The tenant's profile (schema/profiles.ts): where its data lives, plan, status, features, zone. */
export type Placement = TenantProfile

export interface RegistryOptions extends HandleOptions {
  dataDir: string
}

/**
 * Resolves (service, tenant) to an open database by the tenant's isolation tier and keeps a
 * bounded LRU of handles. Every entry point passes tenant ids through `assertTenantId` here, so a
 * bad id never becomes a path.
 *
 * @example
 * const db = registry.tenant('analytics', actor.tenantId)
 * const control = registry.platform('payment')
 */
export interface TenantRegistry {
  readonly dataDir: string
  platform(service: string): Db
  /**
   * The tenant's database for a service. Throws TenantNotFound (404) for a tenant the tenant
   * service never created or has erased, before any file is made: no ghost tenants.
   */
  tenant(service: string, tenantId: string): Db
  /** The database file a (service, tenant) pair lives in right now. */
  pathOf(service: string, tenantId: string): string
  /** The tenant's placement and profile (no file: shared, Free, active, Africa/Nairobi). */
  placement(tenantId: string): Placement
  /** Written by the tenant service only; atomically replaces the file. */
  setPlacement(tenantId: string, placement: Placement): void
  /** Takes back a profile written for a tenant whose creation failed: it does not exist. */
  removePlacement(tenantId: string): void
  /** Whether the tenant service has written a profile for this tenant (it exists as a tenant). */
  hasProfile(tenantId: string): boolean
  /** Throws TenantNotFound unless the tenant exists (the platform tenant always does). */
  assertExists(tenantId: string): string
  /** Folder for a tenant's small JSON state files (placement, entitlements). */
  tenantDir(tenantId: string): string
  /** The database of a given placement, for moving a tenant between tiers. */
  openAt(service: string, placement: Placement, tenantId: string): Db
  /** Every tenant database file of a service that exists on disk (shared and own). */
  existingTenantDatabases(service: string): string[]
  /** Opens a file by path (used for startup scans), through the same LRU. */
  openPath(service: string, path: string, tenantId: string | null): Db
  /** The database file a (service, tenant) pair would use under a given placement; opens nothing. */
  pathAt?(service: string, placement: Placement, tenantId: string): string
  /** Closes the open handle of one file, if any (before its file is deleted). */
  closePath?(path: string): void
  /** Forgets the cached placement of a tenant (after its folder is erased). */
  evictPlacement?(tenantId: string): void
  /** The migrations a service's databases are built with (a tenant move builds its copy with them). */
  migrationsOf(service: string): readonly Migration[]
  closeAll(): void
  /** Handles open right now (tests and metrics). */
  openCount?(): number
  /**
   * Releases half the idle handles at once (the process ran out of descriptors elsewhere: a
   * socket, a JSON file); whether any was released.
   */
  shed?(): boolean
  /** The data dir's profile counter (tenants/generation.ts): caches of profiles check it. */
  readonly generation: ProfileGeneration
}

export const SHARED = '_shared'

/**
 * The folder a tenant's databases live in under a placement: `tenants/_shared` (Free), `tenants/<id>`
 * (Pro, and Enterprise without a path), or the Enterprise `database_path` (relative to the data dir
 * unless absolute).
 */
export function placementFolder(dataDir: string, placement: Placement, tenantId: string): string {
  const root = resolve(dataDir)
  if (placement.isolation === 'shared') return join(root, 'tenants', SHARED)
  if (placement.isolation === 'database' && placement.database_path) {
    return isAbsolute(placement.database_path)
      ? placement.database_path
      : join(root, placement.database_path)
  }
  return join(root, 'tenants', assertTenantId(tenantId))
}

export function createRegistry(opts: RegistryOptions): TenantRegistry {
  const dataDir = resolve(opts.dataDir)
  const tenantsDir = join(dataDir, 'tenants')
  const generation = profileGeneration(dataDir)
  const profiles = createPlacements({ tenantsDir, generation })
  const handles = createHandles(opts)
  const { openPath } = handles
  const fileAt = (service: string, placement: Placement, tenantId: string) =>
    join(placementFolder(dataDir, placement, tenantId), `${service}.db`)

  return {
    dataDir,
    platform: (service) =>
      openPath(service, join(dataDir, 'platform', `${service}.db`), null, true),
    tenant(service, tenantId) {
      profiles.assertExists(tenantId)
      return openPath(service, this.pathOf(service, tenantId), tenantId)
    },
    assertExists: profiles.assertExists,
    pathOf(service, tenantId) {
      assertTenantId(tenantId)
      return fileAt(service, profiles.read(tenantId), tenantId)
    },
    placement: (tenantId) => profiles.read(assertTenantId(tenantId)),
    setPlacement: profiles.write,
    removePlacement: profiles.remove,
    tenantDir: (tenantId) => join(tenantsDir, assertTenantId(tenantId)),
    hasProfile: profiles.has,
    openAt(service, placement, tenantId) {
      assertTenantId(tenantId)
      return openPath(service, fileAt(service, placement, tenantId), tenantId)
    },
    existingTenantDatabases: (service) => existingDatabases({ tenantsDir, profiles, service }),
    openPath,
    pathAt: (service, placement, tenantId) => fileAt(service, placement, assertTenantId(tenantId)),
    closePath: handles.closePath,
    evictPlacement: profiles.forget,
    migrationsOf: (service) => opts.migrations(service),
    generation,
    closeAll: handles.closeAll,
    openCount: handles.openCount,
    shed: handles.shed,
  }
}

/** Every tenant database file of a service on disk: the shared one, own folders, Enterprise paths. */
function existingDatabases({
  tenantsDir,
  profiles,
  service,
}: {
  tenantsDir: string
  profiles: ReturnType<typeof createPlacements>
  service: string
}): string[] {
  if (!existsSync(tenantsDir)) return []
  const out: string[] = []
  for (const entry of readdirSync(tenantsDir)) {
    const own = join(tenantsDir, entry, `${service}.db`)
    if (existsSync(own)) out.push(own)
    if (entry === SHARED) continue
    const p = profiles.read(entry)
    if (p.isolation === 'database') {
      const file = join(placementFolder(dirname(tenantsDir), p, entry), `${service}.db`)
      if (file !== own && existsSync(file) && statSync(file).isFile()) out.push(file)
    }
  }
  return out
}
