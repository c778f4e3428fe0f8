import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

/**
 * A plan the operator creates in billing is usable end to end: through billing's upgrade door and
 * at tenant creation, with the isolation of its tier and its own features and limits.
 */
describe('custom plans', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  const starter = {
    id: 'starter',
    name: 'Starter',
    price: 500,
    limits: { transactions: 2000, statements: 10, users: 3, webhook_endpoints: 1 },
    features: { advanced_analytics: true, bulk_upload: false, api_access: true },
  }

  beforeAll(async () => {
    p = await startTestPlatform()
    operator = api(p.gateway, await p.login())
    // The plan the tests use, as the operator defines one (the first test defines its own).
    expect((await operator.post('/api/v1/billing/plans', starter)).status).toBe(201)
  })
  afterAll(() => p.dispose())

  it('lets the operator create a plan whose tier follows its price', async () => {
    const admin = await createTenantAdmin(p, { id: 'lister' })
    const res = await operator.post('/api/v1/billing/plans', {
      ...starter,
      id: 'lite',
      name: 'Lite',
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ id: 'lite', tier: 'pro', price: 500 })
    const list = await admin.get('/api/v1/billing/plans')
    const listed = list.body.data.find((x: { id: string }) => x.id === 'lite')
    expect(listed).toMatchObject({ tier: 'pro', limits: starter.limits })
    expect(list.body.data.find((x: { id: string }) => x.id === 'free').tier).toBe('free')
  })

  it('upgrades a tenant to it through billing: tier isolation, plan features and limits', async () => {
    const admin = await createTenantAdmin(p, { id: 'acme' })
    await eventually(
      async () => (await admin.get('/api/v1/billing/subscriptions/acme')).status === 200,
    )
    const up = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'acme',
      plan: 'starter',
    })
    expect(up.status).toBe(200)
    expect(up.body).toMatchObject({ tenant_id: 'acme', plan: 'starter' })

    // The tenant follows billing's subscriptions.changed, whose plan_terms carry the tier.
    const tenant = await eventually(async () => {
      const t = await admin.get('/api/v1/tenants/acme')
      return t.body.plan === 'starter' ? t.body : null
    })
    expect(tenant).toMatchObject({
      plan: 'starter',
      isolation: 'schema',
      features: starter.features,
    })

    const usage = await admin.get('/api/v1/billing/usage/acme')
    expect(usage.status).toBe(200)
    expect(usage.body.plan).toBe('starter')
    expect(usage.body.metrics.transactions.limit).toBe(2000)
    expect(usage.body.metrics.statements.limit).toBe(10)
    expect(usage.body.metrics.users).toEqual({ used: 1, limit: 3 })
    expect(usage.body.metrics.webhook_endpoints).toEqual({ used: 0, limit: 1 })

    // The plan's user limit holds in the tenant service too.
    for (const email of ['a@acme.test', 'b@acme.test']) {
      const r = await admin.post('/api/v1/tenants/acme/users', { email, role: 'Viewer' })
      expect(r.status).toBe(201)
    }
    const over = await admin.post('/api/v1/tenants/acme/users', {
      email: 'c@acme.test',
      role: 'Viewer',
    })
    expect(over.status).toBe(402)
    expect(over.body).toMatchObject({ limit: 'users', max: 3 })
  })

  it('creates a tenant on it, and refuses a plan nobody defines with 422', async () => {
    const created = await operator.post('/api/v1/tenants', {
      id: 'beta',
      name: 'Beta',
      plan: 'starter',
      admin_email: 'owner@beta.test',
      admin_password: 'beta-password-1',
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      plan: 'starter',
      isolation: 'schema',
      features: starter.features,
    })
    const sub = await eventually(async () => {
      const s = await operator.get('/api/v1/billing/subscriptions/beta')
      return s.status === 200 && s.body.plan === 'starter' ? s.body : null
    })
    expect(sub.status).toBe('active')

    const unknown = await operator.post('/api/v1/tenants', {
      id: 'gamma',
      name: 'Gamma',
      plan: 'platinum',
      admin_email: 'owner@gamma.test',
    })
    expect(unknown.status).toBe(422)
    const admin = api(p.gateway, await p.login('owner@beta.test', 'beta-password-1'))
    const viaBilling = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'beta',
      plan: 'platinum',
    })
    expect(viaBilling.status).toBe(422)
    expect((await admin.get('/api/v1/tenants/beta')).body.plan).toBe('starter')
  })
  /**
   * The four places a plan shows, each written by its one owner: billing's subscription and
   * entitlements.json, the tenant row and placement.json (tenant service).
   */
  const whereThePlanShows = async (id: string) => {
    const read = (file: string) =>
      JSON.parse(readFileSync(join(p.dataDir, 'tenants', id, file), 'utf8'))
    return {
      subscription: (await operator.get(`/api/v1/billing/subscriptions/${id}`)).body.plan,
      tenant: (await operator.get(`/api/v1/tenants/${id}`)).body,
      placement: read('placement.json'),
      entitlements: read('entitlements.json'),
    }
  }
  const expectAgreement = async (id: string, plan: string, isolation: string) => {
    const seen = await eventually(
      async () => {
        const w = await whereThePlanShows(id)
        const agree =
          w.subscription === plan &&
          w.tenant.plan === plan &&
          w.placement.plan === plan &&
          w.entitlements.plan === plan
        return agree ? w : null
      },
      10_000,
      `${id} on ${plan} everywhere`,
    )
    expect(seen.tenant.isolation).toBe(isolation)
    expect(seen.placement.isolation).toBe(isolation)
    return seen
  }

  it('ends a plan change through either door with billing, the tenant row and both files agreeing', async () => {
    const created = await operator.post('/api/v1/tenants', {
      id: 'delta',
      name: 'Delta',
      admin_email: 'owner@delta.test',
      admin_password: 'delta-password-1',
    })
    expect(created.status).toBe(201)
    await expectAgreement('delta', 'free', 'shared')
    const delta = api(p.gateway, await p.login('owner@delta.test', 'delta-password-1'))
    // The tenant's door: through billing, applied before it answers.
    const viaTenant = await delta.put('/api/v1/tenants/delta/upgrade', { plan: 'pro' })
    expect(viaTenant.status).toBe(200)
    expect(viaTenant.body).toMatchObject({
      plan: 'pro',
      isolation: 'schema',
      previous_plan: 'free',
    })
    expect((await operator.get('/api/v1/billing/subscriptions/delta')).body.plan).toBe('pro')
    await expectAgreement('delta', 'pro', 'schema')
    // Billing's door to a custom plan: the tenant follows the event.
    const viaBilling = await delta.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'delta',
      plan: 'starter',
    })
    expect(viaBilling.status).toBe(200)
    const custom = await expectAgreement('delta', 'starter', 'schema')
    expect(custom.tenant.features).toEqual(starter.features)
    expect(custom.entitlements.limits).toMatchObject({ transactions: 2000 })
    // The tenant's door to a custom plan of another tier, then billing's back to a built-in one.
    const bank = await operator.post('/api/v1/billing/plans', {
      ...starter,
      id: 'bank',
      name: 'Bank',
      tier: 'enterprise',
      price: 9000,
    })
    expect(bank.status).toBe(201)
    const toBank = await operator.put('/api/v1/tenants/delta/upgrade', { plan: 'bank' })
    expect(toBank.body).toMatchObject({ plan: 'bank', isolation: 'database' })
    await expectAgreement('delta', 'bank', 'database')
    const back = await delta.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'delta',
      plan: 'free',
    })
    expect(back.status).toBe(200)
    const free = await expectAgreement('delta', 'free', 'shared')
    expect(free.tenant.features).toMatchObject({ advanced_analytics: false })
    const history = (await operator.get('/api/v1/billing/subscriptions/delta/events')).body.data
    expect(history.map((e: { plan: string }) => e.plan)).toEqual([
      'free',
      'pro',
      'starter',
      'bank',
      'free',
    ])
  })
})
