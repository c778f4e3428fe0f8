import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { TenantNotFound } from '../schema/errors.ts'
import { TenantProfile } from '../schema/profiles.ts'
import { assertTenantId, PLATFORM_TENANT } from '../schema/tenant-id.ts'
import type { ProfileGeneration, Stamp } from './generation.ts'
import { replaceJson } from './json-file.ts'

type Placement = TenantProfile

/**
 * The tenants' profiles of a registry (tenants/registry.ts), `tenants/<id>/placement.json`, read
 * through a cache that the data dir's profile counter (tenants/generation.ts) keeps fresh.
 */
export function createPlacements({
  tenantsDir,
  generation,
}: {
  tenantsDir: string
  generation: ProfileGeneration
}) {
  const { profiles } = generation
  const placements = new Map<string, Stamp & { p: Placement }>()
  /**
   * Tenants whose profile was seen, and when: a request asks several times (its checks, each
   * database it opens), and a stat each time was the largest cost after SQL on the analytics
   * summary. An erasure anywhere on this data dir bumps the profile counter and is seen at once.
   */
  const existing = new Map<string, Stamp>()

  const placementFile = (tenantId: string) => join(tenantsDir, tenantId, 'placement.json')

  const read = (tenantId: string): Placement => {
    const now = Date.now()
    const cached = placements.get(tenantId)
    if (profiles.fresh(cached, now)) return cached.p
    // The counter first, then the file: a change between the two is seen on the next call.
    const stamp = profiles.stamp(now)
    const file = placementFile(tenantId)
    let p: Placement = { isolation: 'shared' }
    if (existsSync(file)) {
      const found: unknown = JSON.parse(readFileSync(file, 'utf8'))
      // A profile that is not what the tenant service writes is a broken install, said loudly.
      if (!Value.Check(TenantProfile, found))
        throw new Error(
          `tenants/${tenantId}/placement.json does not match the tenant profile schema`,
        )
      p = found
    }
    placements.set(tenantId, { ...stamp, p })
    return p
  }

  return {
    read,
    assertExists(tenantId: string): string {
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
    write(tenantId: string, placement: Placement) {
      assertTenantId(tenantId)
      mkdirSync(join(tenantsDir, tenantId), { recursive: true })
      replaceJson(placementFile(tenantId), placement)
      profiles.bump()
      placements.set(tenantId, { ...profiles.stamp(Date.now()), p: placement })
    },
    remove(tenantId: string) {
      rmSync(placementFile(assertTenantId(tenantId)), { force: true })
      profiles.bump()
      placements.delete(tenantId)
      existing.delete(tenantId)
    },
    has: (tenantId: string) => existsSync(placementFile(assertTenantId(tenantId))),
    forget(tenantId: string) {
      placements.delete(tenantId)
      existing.delete(tenantId)
    },
  }
}
