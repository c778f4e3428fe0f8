import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ownerOf } from '../services/kernel/tenant-owner.ts'
import { api, eventually } from './support/platform.ts'
import { type PartitionedPlatform, startPartitionedPlatform } from './support/split.ts'
import { createTenants } from './support/tenants.ts'

/**
 * DESIGN §12, tenants spread over instances: two analytics instances, each with its own data dir,
 * own disjoint halves of the tenants by rendezvous hashing. Every tenant's summary read through
 * the gateway is right, an instance refuses another's tenant with 421, and each instance's data
 * dir holds only its own tenants' rows and files.
 */
describe('analytics as two instances that each own half of the tenants', () => {
  let split: PartitionedPlatform
  /** Tenant → its rows' amounts (in, out), per instance: one Pro and two Free tenants each. */
  const tenants: Array<{ id: string; plan: 'free' | 'pro'; owner: number; amounts: number[] }> = []

  beforeAll(async () => {
    split = await startPartitionedPlatform()
    // Tenant ids whose owners cover both instances with both tiers, whatever ports were drawn.
    const need: Record<string, number> = { 'pro 0': 1, 'free 0': 2, 'pro 1': 1, 'free 1': 2 }
    for (let i = 0; tenants.length < 6; i++) {
      const id = `shop-${i}`
      const owner = split.instances.indexOf(ownerOf(id, split.instances))
      const plan = need[`pro ${owner}`]! > 0 ? 'pro' : need[`free ${owner}`]! > 0 ? 'free' : null
      if (!plan) continue
      need[`${plan} ${owner}`]!--
      tenants.push({ id, plan, owner, amounts: [100 + i, 2000 + 7 * i, -(30 + i)] })
    }
    const operator = await split.main.login()
    await createTenants(
      split.main.gateway,
      operator,
      ...tenants.map((t) => ({ id: t.id, plan: t.plan })),
    )
    // Each instance keeps its own copy of the profiles, from tenants.changed (daemon/profiles.ts):
    // nothing of the main data dir is copied.
    for (const instance of split.analytics) {
      await eventually(
        () =>
          tenants.every((t) =>
            existsSync(join(instance.dataDir, 'tenants', t.id, 'placement.json')),
          ),
        15_000,
        'every tenant profile on the instance',
      )
    }
    const day = new Date(Date.now() - 3 * 86_400_000).toISOString()
    for (const t of tenants) {
      const res = await api(split.main.gateway, operator).post('/api/v1/parser/transactions', {
        tenant_id: t.id,
        transactions: t.amounts.map((a, k) => ({
          occurred_at: day,
          amount: Math.abs(a),
          direction: a < 0 ? 'out' : 'in',
          description: `Row ${k} of ${t.id}`,
          receipt_number: `R${t.id.replace('-', '').toUpperCase()}${k}`,
        })),
      })
      expect(res.body).toMatchObject({ accepted: t.amounts.length })
    }
  }, 120_000)
  afterAll(() => split?.dispose())

  it('answers each tenant its own summary through the gateway', async () => {
    for (const t of tenants) {
      const admin = api(
        split.main.gateway,
        await split.main.login(`owner@${t.id}.test`, `${t.id}-Owner-Passphrase-42`),
      )
      const totalIn = t.amounts.filter((a) => a > 0).reduce((a, b) => a + b, 0)
      const totalOut = -t.amounts.filter((a) => a < 0).reduce((a, b) => a + b, 0)
      const summary = await eventually(
        async () => {
          const res = await admin.get('/api/v1/analytics/summary')
          return res.body?.total_transactions === t.amounts.length ? res.body : undefined
        },
        15_000,
        `the summary of ${t.id}`,
      )
      expect(summary).toMatchObject({
        total_transactions: 3,
        total_in: totalIn,
        total_out: totalOut,
        net: totalIn - totalOut,
        total_amount: totalIn + totalOut,
        active_days: 1,
      })
    }
    // The operator reading for a tenant is routed by the tenant it names.
    const operator = api(split.main.gateway, await split.main.login())
    for (const t of tenants) {
      const res = await operator.get(`/api/v1/analytics/summary?tenant_id=${t.id}`)
      expect(res.status).toBe(200)
      expect(res.body.total_transactions).toBe(3)
    }
  })

  it('refuses a tenant at the instance that does not own it with 421 TENANT_ELSEWHERE', async () => {
    const t = tenants[0]!
    const token = await split.main.login(`owner@${t.id}.test`, `${t.id}-Owner-Passphrase-42`)
    const other = split.instances[1 - t.owner]!
    const res = await api(other, token).get('/api/v1/analytics/summary')
    expect(res.status).toBe(421)
    expect(res.body).toMatchObject({ code: 'TENANT_ELSEWHERE', tenant_id: t.id })
    expect(
      (await api(split.instances[t.owner]!, token).get('/api/v1/analytics/summary')).status,
    ).toBe(200)
  })

  it('verifies tokens with the key auth publishes (JWKS), holding no key file of its own', () => {
    for (const instance of split.analytics) {
      expect(existsSync(join(instance.dataDir, 'keys'))).toBe(false)
      expect(instance.logs()).toContain('mmp is up')
    }
  })

  it('keeps in each instance’s data dir only its own tenants’ files and rows', () => {
    for (const [i, instance] of split.analytics.entries()) {
      const root = join(instance.dataDir, 'tenants')
      const withFiles = readdirSync(root).filter((d) =>
        readdirSync(join(root, d)).some((f) => f.endsWith('.db')),
      )
      const pro = tenants.filter((t) => t.owner === i && t.plan === 'pro').map((t) => t.id)
      expect(withFiles.sort()).toEqual([...pro, '_shared'].sort())
      const db = new Database(join(root, '_shared', 'analytics.db'), { readonly: true })
      try {
        const seen = new Set<string>()
        const tables = db
          .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
        for (const { name } of tables) {
          const cols = db.query<{ name: string }, []>(`PRAGMA table_info("${name}")`).all()
          if (!cols.some((c) => c.name === 'tenant_id')) continue
          for (const r of db
            .query<{ tenant_id: string }, []>(`SELECT DISTINCT tenant_id FROM "${name}"`)
            .all())
            seen.add(r.tenant_id)
        }
        const free = tenants.filter((t) => t.owner === i && t.plan === 'free').map((t) => t.id)
        expect([...seen].sort()).toEqual(free.sort())
      } finally {
        db.close()
      }
    }
  })
})
