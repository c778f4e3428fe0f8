import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { TenantNotFound } from '../schema/errors.ts'
import { TenantProfile } from '../schema/profiles.ts'
import { assertTenantId, PLATFORM_TENANT } from '../schema/tenant-id.ts'
import type { Db, Migration } from './db.ts'
import { openDatabase } from './db.ts'
import { type ProfileGeneration, profileGeneration, type Stamp } from './generation.ts'
import { replaceJson } from './json-file.ts'

/** The tenant's profile (schema/profiles.ts): where its data lives, plan, status, features, zone. */
export type Placement = TenantProfile

export interface RegistryOptions {
  dataDir: string
  /** Migrations of each service's databases. */
  migrations: (service: string) => readonly Migration[]
  /** `FULL` for money (payment, billing), `NORMAL` elsewhere. */
  synchronous?: (service: string) => 'FULL' | 'NORMAL'
  /**
   * Open handles kept at most, for the whole process (every service shares this registry): beyond
   * it the least recently used handle that is not busy is released and its descriptors freed.
   * Platform databases are never released (services hold statements on them for life).
   */
  maxOpen?: number
  /** Told once when every open handle is busy and the cap cannot be kept. */
  onOverCap?: (open: number, max: number) => void
  /** Called once for every database the first time it is opened (the relay watches it). */
  onOpen?: (
    db: Db,
    info: { service: string; tenantId: string | null; firstInProcess: boolean },
  ) => void
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
  const max = opts.maxOpen ?? 256
  /** Open handles, least recently used first (a path may have two: see `openPath`). */
  const lru = new Map<Db, string>()
  /** The handle `openPath` gives out for a path. */
  const current = new Map<string, Db>()
  const pinned = new Set<string>()
  /** Files closed before deletion: a released handle of one must not recreate it. */
  const erased = new Set<string>()
  const seen = new Set<string>()
  let warnedOverCap = false
  const generation = profileGeneration(dataDir)
  const { profiles } = generation
  const placements = new Map<string, Stamp & { p: Placement }>()
  /**
   * Tenants whose profile was seen, and when: a request asks several times (its checks, each
   * database it opens), and a stat each time was the largest cost after SQL on the analytics
   * summary. An erasure anywhere on this data dir bumps the profile counter and is seen at once.
   */
  const existing = new Map<string, Stamp>()

  const placementFile = (tenantId: string) => join(tenantsDir, tenantId, 'placement.json')

  const readPlacement = (tenantId: string): Placement => {
    const now = Date.now()
    const cached = placements.get(tenantId)
    if (profiles.fresh(cached, now)) return cached.p
    // The counter first, then the file: a change between the two is seen on the next call.
    const stamp = profiles.stamp(now)
    const file = placementFile(tenantId)
    let p: Placement = { isolation: 'shared' }
    if (existsSync(file)) {
      const read: unknown = JSON.parse(readFileSync(file, 'utf8'))
      // A profile that is not what the tenant service writes is a broken install, said loudly.
      if (!Value.Check(TenantProfile, read))
        throw new Error(
          `tenants/${tenantId}/placement.json does not match the tenant profile schema`,
        )
      p = read
    }
    placements.set(tenantId, { ...stamp, p })
    return p
  }

  const folderOf = (placement: Placement, tenantId: string): string =>
    placementFolder(dataDir, placement, tenantId)

  /** Releases least recently used handles that are not busy until the cap holds. */
  const evict = (keep: Db | null, room = 0) => {
    const limit = max - room
    if (lru.size <= limit) return
    for (const [db, path] of lru) {
      if (lru.size <= limit) break
      if (db.gone) lru.delete(db)
      else if (db === keep || pinned.has(path) || db.busy) continue
      else if (db.release()) {
        lru.delete(db)
        if (current.get(path) === db) current.delete(path)
      }
    }
    if (lru.size > limit && !warnedOverCap) {
      warnedOverCap = true
      opts.onOverCap?.(lru.size, max)
    }
  }

  /** Releases up to `n` idle handles, oldest first; whether any was released. */
  const shrink = (n: number): boolean => {
    let released = 0
    for (const [db, path] of lru) {
      if (released >= n) break
      if (pinned.has(path) || db.busy || !db.release()) continue
      lru.delete(db)
      if (current.get(path) === db) current.delete(path)
      released++
    }
    return released > 0
  }

  const touch = (db: Db, path: string) => {
    lru.delete(db)
    lru.set(db, path)
  }

  /**
   * A released handle is never given out again: services cache prepared statements per `Db`
   * (WeakMap), and those died with the release. Code that still holds the old one reopens it on
   * use; it then counts in the LRU again beside the new one.
   */
  const openPath = (service: string, path: string, tenantId: string | null, pin = false): Db => {
    if (pin) pinned.add(path)
    const hit = current.get(path)
    if (hit && !hit.closed) {
      touch(hit, path)
      return hit
    }
    erased.delete(path)
    const open = () =>
      openDatabase(path, {
        migrations: opts.migrations(service),
        synchronous: opts.synchronous?.(service) ?? 'NORMAL',
        mayReopen: () => {
          evict(null, 1)
          return !erased.has(path)
        },
        onReopen(reopened) {
          touch(reopened, path)
          evict(reopened)
        },
      })
    // Room first, then the open: the descriptors never exceed the cap, even for a moment.
    evict(null, 1)
    let db: Db
    try {
      db = open()
    } catch (err) {
      // Out of descriptors (other files, sockets): give back half the idle handles and try once more.
      if (!/unable to open/i.test((err as Error)?.message ?? '') || !shrink(lru.size >> 1))
        throw err
      db = open()
    }
    current.set(path, db)
    touch(db, path)
    const firstInProcess = !seen.has(path)
    seen.add(path)
    opts.onOpen?.(db, { service, tenantId, firstInProcess })
    evict(db)
    return db
  }

  return {
    dataDir,
    platform: (service) =>
      openPath(service, join(dataDir, 'platform', `${service}.db`), null, true),
    tenant(service, tenantId) {
      this.assertExists(tenantId)
      return openPath(service, this.pathOf(service, tenantId), tenantId)
    },
    assertExists(tenantId) {
      assertTenantId(tenantId)
      if (tenantId === PLATFORM_TENANT) return tenantId
      const now = Date.now()
      if (profiles.fresh(existing.get(tenantId), now)) return tenantId
      const stamp = profiles.stamp(now)
      if (!existsSync(placementFile(tenantId))) {
        existing.delete(tenantId)
        throw new TenantNotFound(tenantId)
      }
      if (existing.size > 100_000) existing.clear()
      existing.set(tenantId, stamp)
      return tenantId
    },
    pathOf(service, tenantId) {
      assertTenantId(tenantId)
      return join(folderOf(readPlacement(tenantId), tenantId), `${service}.db`)
    },
    placement: (tenantId) => readPlacement(assertTenantId(tenantId)),
    setPlacement(tenantId, placement) {
      assertTenantId(tenantId)
      const file = placementFile(tenantId)
      mkdirSync(join(tenantsDir, tenantId), { recursive: true })
      replaceJson(file, placement)
      profiles.bump()
      placements.set(tenantId, { ...profiles.stamp(Date.now()), p: placement })
    },
    removePlacement(tenantId) {
      rmSync(placementFile(assertTenantId(tenantId)), { force: true })
      profiles.bump()
      placements.delete(tenantId)
      existing.delete(tenantId)
    },
    tenantDir: (tenantId) => join(tenantsDir, assertTenantId(tenantId)),
    hasProfile: (tenantId) => existsSync(placementFile(assertTenantId(tenantId))),
    openAt(service, placement, tenantId) {
      assertTenantId(tenantId)
      return openPath(service, join(folderOf(placement, tenantId), `${service}.db`), tenantId)
    },
    existingTenantDatabases(service) {
      if (!existsSync(tenantsDir)) return []
      const out: string[] = []
      for (const entry of readdirSync(tenantsDir)) {
        const own = join(tenantsDir, entry, `${service}.db`)
        if (existsSync(own)) out.push(own)
        if (entry === SHARED) continue
        const p = readPlacement(entry)
        if (p.isolation === 'database') {
          const file = join(folderOf(p, entry), `${service}.db`)
          if (file !== own && existsSync(file) && statSync(file).isFile()) out.push(file)
        }
      }
      return out
    },
    openPath,
    pathAt: (service, placement, tenantId) =>
      join(folderOf(placement, assertTenantId(tenantId)), `${service}.db`),
    closePath(path) {
      erased.add(path)
      current.delete(path)
      for (const [db, p] of lru) {
        if (p !== path) continue
        lru.delete(db)
        db.close()
      }
    },
    evictPlacement(tenantId) {
      placements.delete(tenantId)
      existing.delete(tenantId)
    },
    migrationsOf: (service) => opts.migrations(service),
    generation,
    closeAll() {
      for (const db of lru.keys()) db.close()
      lru.clear()
      current.clear()
    },
    openCount: () => lru.size,
    shed: () => shrink(Math.max(1, lru.size >> 1)),
  }
}
