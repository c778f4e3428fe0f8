import { afterEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { topics } from '../schema/events.ts'
import type { Entitlements } from '../schema/profiles.ts'
import { createMemoryBus } from '../services/kernel/bus.ts'
import { readEntitlements } from '../services/kernel/entitlements.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import { createLogger } from '../services/kernel/log.ts'
import { createRegistry } from '../tenants/registry.ts'
import { migrationsOf } from './migrations.ts'
import { followProfiles, learnTenantsFrom } from './profiles.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const quiet = () => {
  const log = createLogger('profiles')
  log.level = -999
  return log
}

const profile = (over: Record<string, unknown> = {}) => ({
  updated_at: '2026-11-23T09:00:00.000Z',
  plan: 'free',
  isolation: 'shared',
  status: 'active',
  features: { advanced_analytics: false },
  timezone: 'Africa/Nairobi',
  ...over,
})

const changed = (tenantId: string, at: string, data: Record<string, unknown>) => ({
  id: `evt_${tenantId}_${at}`,
  type: topics.tenantsChanged,
  version: 1,
  tenant_id: tenantId,
  occurred_at: at,
  data: { change: 'updated', name: tenantId, ...profile(), ...data },
})

/** A part on its own data dir running analytics, told by a tenant service that lists `listed`. */
async function part(
  listed: Array<Record<string, unknown>> = [],
  owner?: string,
  /** What billing lists: every tenant's entitlements. */
  entitled: Array<{ tenant_id: string; entitlements: Entitlements }> = [],
  /** The data dir of an earlier start of this part. */
  again?: string,
) {
  const dataDir = again ?? mkdtempSync(join(tmpdir(), 'mmp-profiles-'))
  if (!again) dirs.push(dataDir)
  if (owner) {
    mkdirSync(join(dataDir, 'platform'), { recursive: true })
    writeFileSync(join(dataDir, 'platform', `${owner}.db`), '')
  }
  const registry = createRegistry({ dataDir, migrations: migrationsOf })
  const bus = createMemoryBus()
  const asked: string[] = []
  const client: ServiceClient = {
    async call<T>(service: string, path: string): Promise<T> {
      asked.push(`${service} ${path}`)
      return { data: service === 'billing' ? entitled : listed } as T
    },
  }
  const feed = await followProfiles({
    registry,
    bus,
    client,
    services: ['analytics'],
    log: quiet(),
  })
  await feed.loaded
  return { dataDir, registry, bus, asked, stop: () => feed.stop() }
}

describe('a part on its own data dir', () => {
  it('asks the tenant service once at start and keeps the profiles it was told', async () => {
    const p = await part([
      { id: 'acme', ...profile() },
      { id: 'kilo', ...profile({ plan: 'pro', isolation: 'schema' }) },
    ])
    expect(p.asked.sort()).toEqual(['billing /internal/entitlements', 'tenant /api/v1/tenants'])
    expect(p.registry.placement('acme')).toMatchObject({ isolation: 'shared', plan: 'free' })
    expect(p.registry.placement('kilo')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    expect(p.registry.assertExists('kilo')).toBe('kilo')
    p.stop()
  })

  it('moves its own rows when the tier changes, and ignores an older event arriving late', async () => {
    const p = await part()
    await p.bus.publish(
      topics.tenantsChanged,
      changed('acme', '2026-11-23T10:00:00.000Z', { change: 'created' }),
    )
    const shared = p.registry.tenant('analytics', 'acme')
    expect(shared.path).toBe(join(p.dataDir, 'tenants', '_shared', 'analytics.db'))
    shared.write(() =>
      shared.sqlite.run(
        "INSERT INTO outbox (id, topic, tenant_id, payload, created_at) VALUES ('evt_x', 't', 'acme', '{}', '2026-11-23')",
      ),
    )
    await p.bus.publish(
      topics.tenantsChanged,
      changed('acme', '2026-11-23T10:05:00.000Z', { plan: 'pro', isolation: 'schema' }),
    )
    const own = p.registry.tenant('analytics', 'acme')
    expect(own.path).toBe(join(p.dataDir, 'tenants', 'acme', 'analytics.db'))
    const count = (db: typeof own) =>
      db.sqlite
        .query<{ n: number }, []>("SELECT count(*) AS n FROM outbox WHERE tenant_id = 'acme'")
        .get()!.n
    expect(count(own)).toBe(1)
    expect(count(shared)).toBe(0)
    // Redelivered after the move: older than the profile held, so nothing goes back.
    await p.bus.publish(
      topics.tenantsChanged,
      changed('acme', '2026-11-23T10:00:00.000Z', { change: 'created' }),
    )
    expect(p.registry.placement('acme')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    p.stop()
  })

  it('erases its rows and the profile of a tenant the tenant service erased', async () => {
    const p = await part([{ id: 'acme', ...profile({ isolation: 'schema' }) }])
    p.registry.tenant('analytics', 'acme')
    expect(existsSync(join(p.dataDir, 'tenants', 'acme', 'analytics.db'))).toBe(true)
    await p.bus.publish(
      topics.tenantsChanged,
      changed('acme', '2026-11-23T11:00:00.000Z', { change: 'deleted' }),
    )
    expect(existsSync(join(p.dataDir, 'tenants', 'acme', 'analytics.db'))).toBe(false)
    expect(() => p.registry.assertExists('acme')).toThrow(/does not exist/)
    p.stop()
  })

  it('erases at start a tenant the whole list lacks: it was erased while this part was away', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString()
    const first = await part([
      { id: 'gone', ...profile({ isolation: 'schema', updated_at: hourAgo }) },
      { id: 'kept', ...profile({ updated_at: hourAgo }) },
      { id: 'fresh', ...profile({ updated_at: new Date().toISOString() }) },
    ])
    first.registry.tenant('analytics', 'gone')
    first.stop()
    first.registry.closeAll()
    expect(existsSync(join(first.dataDir, 'tenants', 'gone', 'analytics.db'))).toBe(true)

    const again = await part(
      [{ id: 'kept', ...profile({ updated_at: hourAgo }) }],
      undefined,
      [],
      first.dataDir,
    )
    expect(existsSync(join(first.dataDir, 'tenants', 'gone', 'analytics.db'))).toBe(false)
    expect(again.registry.hasProfile('gone')).toBe(false)
    expect(again.registry.hasProfile('kept')).toBe(true)
    // Learnt minutes ago, so possibly a creation the list does not show yet: left alone.
    expect(again.registry.hasProfile('fresh')).toBe(true)
    again.stop()
  })

  const e = (status: Entitlements['status'], at: string): Entitlements => ({
    plan: 'free',
    status,
    period_start: '2026-11-01T00:00:00.000Z',
    period_end: '2026-12-01T00:00:00.000Z',
    limits: { transactions: 1000 },
    used: { transactions: 3 },
    updated_at: at,
  })

  it('asks billing once at start for the entitlements it wrote before this part started', async () => {
    const p = await part([{ id: 'acme', ...profile() }], undefined, [
      { tenant_id: 'acme', entitlements: e('suspended', '2026-11-23T10:05:00.000Z') },
    ])
    expect(readEntitlements(p.registry, 'acme')).toMatchObject({ status: 'suspended' })
    p.stop()
  })

  it('keeps the entitlements billing announces, newest first', async () => {
    const p = await part([{ id: 'acme', ...profile() }])
    const announce = (entitlements: Entitlements | null) =>
      p.bus.publish(topics.entitlementsChanged, {
        id: `evt_${Math.random()}`,
        type: topics.entitlementsChanged,
        version: 1,
        tenant_id: 'acme',
        occurred_at: new Date().toISOString(),
        data: { entitlements },
      })
    await announce(e('suspended', '2026-11-23T10:05:00.000Z'))
    expect(readEntitlements(p.registry, 'acme')?.status).toBe('suspended')
    await announce(e('active', '2026-11-23T10:00:00.000Z'))
    expect(readEntitlements(p.registry, 'acme')?.status).toBe('suspended')
    await announce(null)
    expect(readEntitlements(p.registry, 'acme')).toBeNull()
    p.stop()
  })

  it('copies nothing where the tenant service shares its data dir: its file is the truth', async () => {
    const p = await part([{ id: 'acme', ...profile() }], 'tenant')
    // Billing is not on this data dir: only it is asked.
    expect(p.asked).toEqual(['billing /internal/entitlements'])
    await p.bus.publish(
      topics.tenantsChanged,
      changed('kilo', '2026-11-23T10:00:00.000Z', { change: 'created' }),
    )
    expect(p.registry.hasProfile('kilo')).toBe(false)
    p.stop()
  })

  it('asks the tenant service about a tenant a request names before its event came, once', async () => {
    const p = await part()
    const asked: string[] = []
    const known = new Set(['kilo'])
    const learn = learnTenantsFrom({
      registry: p.registry,
      client: {
        async call<T>(_service: string, path: string): Promise<T> {
          asked.push(path)
          const id = path.split('/').pop()!
          if (!known.has(id)) throw new Error('404')
          return { id, ...profile({ plan: 'pro', isolation: 'schema' }) } as T
        },
      },
    })
    expect(await learn('kilo')).toBe(true)
    expect(p.registry.placement('kilo')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    // A tenant the tenant service does not know: no profile, and not asked again at once.
    expect(await learn('ghost')).toBe(false)
    expect(await learn('ghost')).toBe(false)
    expect(p.registry.hasProfile('ghost')).toBe(false)
    expect(asked).toEqual(['/api/v1/tenants/kilo', '/api/v1/tenants/ghost'])
    p.stop()
  })
})
