import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * A plan the operator creates in billing is usable end to end: through billing's upgrade door and
 * at tenant creation, with the isolation of its tier and its own features and limits.
 */
describe('custom plans', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  let admin: ReturnType<typeof api>
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
    const created = await operator.post('/api/v1/tenants', {
      id: 'acme',
      name: 'Acme',
      admin_email: 'owner@acme.test',
      admin_password: 'acme-password-1',
    })
    expect(created.status).toBe(201)
    admin = api(p.gateway, await p.login('owner@acme.test', 'acme-password-1'))
  })
  afterAll(() => p.dispose())

  it('lets the operator create a plan whose tier follows its price', async () => {
    const res = await operator.post('/api/v1/billing/plans', starter)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ id: 'starter', tier: 'pro', price: 500 })
    const list = await admin.get('/api/v1/billing/plans')
    const listed = list.body.data.find((x: { id: string }) => x.id === 'starter')
    expect(listed).toMatchObject({ tier: 'pro', limits: starter.limits })
    expect(list.body.data.find((x: { id: string }) => x.id === 'free').tier).toBe('free')
  })

  it('upgrades a tenant to it through billing: tier isolation, plan features and limits', async () => {
    await eventually(
      async () => (await admin.get('/api/v1/billing/subscriptions/acme')).status === 200,
    )
    const up = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'acme',
      plan: 'starter',
    })
    expect(up.status).toBe(200)
    expect(up.body).toMatchObject({ tenant_id: 'acme', plan: 'starter' })

    const tenant = await admin.get('/api/v1/tenants/acme')
    expect(tenant.status).toBe(200)
    expect(tenant.body).toMatchObject({
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
    const viaBilling = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'acme',
      plan: 'platinum',
    })
    expect(viaBilling.status).toBe(422)
    expect((await admin.get('/api/v1/tenants/acme')).body.plan).toBe('starter')
  })
})
