import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantOwner } from './support/tenants.ts'

/** Billing with the real tenant and payment services behind it (DESIGN §10). */
describe('billing across services', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  beforeAll(async () => {
    p = await startTestPlatform()
    operator = api(p.gateway, await p.login())
  })
  afterAll(() => p.dispose())

  /**
   * A tenant of the test's own, made in the test: the billing cycle one test runs covers every
   * tenant that exists then, so none is shared. On Pro through billing's door when asked.
   */
  const shop = async (id: string, plan: 'free' | 'pro' = 'free') => {
    const owner = await createTenantOwner(p, { id })
    const sub = await eventually(async () => {
      const s = await owner.admin.get(`/api/v1/billing/subscriptions/${id}`)
      return s.status === 200 ? s.body : null
    })
    expect(sub).toMatchObject({ tenant_id: id, plan: 'free' })
    if (plan === 'pro') await upgrade(owner.admin, id)
    return owner
  }
  const upgrade = async (admin: ReturnType<typeof api>, id: string) => {
    const upgraded = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: id,
      plan: 'pro',
    })
    expect(upgraded.status).toBe(200)
    expect(upgraded.body).toMatchObject({ tenant_id: id, plan: 'pro' })
    // The tenant follows billing's subscriptions.changed, milliseconds after the answer.
    return await eventually(async () => {
      const t = await admin.get(`/api/v1/tenants/${id}`)
      return t.body.plan === 'pro' ? t.body : null
    })
  }

  it('upgrades through billing’s door: the tenant moves to Pro and its own folder', async () => {
    const { admin } = await shop('up')
    const tenant = await upgrade(admin, 'up')
    expect(tenant).toMatchObject({ plan: 'pro', isolation: 'schema' })
    expect(tenant.features.advanced_analytics).toBe(true)
  })

  it('answers 404 to the operator for a tenant nobody knows, instead of inventing one', async () => {
    await shop('known')
    expect((await operator.get('/api/v1/billing/subscriptions/no-such-shop')).status).toBe(404)
    expect((await operator.get('/api/v1/billing/usage/no-such-shop')).status).toBe(404)
    expect((await operator.get('/api/v1/billing/subscriptions/known')).status).toBe(200)
  })

  it('reports users and webhook endpoints counted by the services that own them', async () => {
    const { admin } = await shop('counted', 'pro')
    await admin.post('/api/v1/tenants/counted/users', {
      email: 'clerk@counted.test',
      role: 'Viewer',
    })
    for (const path of ['/api/v1/billing/usage/counted', '/api/v1/tenants/counted/usage']) {
      const usage = await admin.get(path)
      expect(usage.status, path).toBe(200)
      expect(usage.body.metrics.users, path).toEqual({ used: 2, limit: 20 })
      expect(usage.body.metrics.webhook_endpoints, path).toEqual({ used: 0, limit: 10 })
    }
  })

  it('invoices the period and is paid by STK push through the payment service', async () => {
    const { admin, token: adminToken } = await shop('shop', 'pro')
    const sub = (await admin.get('/api/v1/billing/subscriptions/shop')).body
    const at = new Date(new Date(sub.current_period_end).getTime() + 3_600_000).toISOString()
    const cycle = await operator.post('/api/v1/billing/run-cycle', { at })
    expect(cycle.status).toBe(200)
    const invoices = await admin.get('/api/v1/billing/invoices')
    expect(invoices.body.data).toHaveLength(1)
    const invoice = invoices.body.data[0]
    expect(invoice).toMatchObject({ tenant_id: 'shop', status: 'open', currency: 'KES' })
    expect(invoice.number).toMatch(/^INV-\d{6}$/)
    expect(invoice.total).toBeGreaterThan(0)

    // Unpaid past the grace period: suspended. Reads work, writes anywhere answer 402.
    const late = new Date(new Date(invoice.due_at).getTime() + 8 * 86_400_000).toISOString()
    expect((await operator.post('/api/v1/billing/run-cycle', { at: late })).status).toBe(200)
    expect((await admin.get('/api/v1/billing/subscriptions/shop')).body.status).toBe('suspended')
    const rule = {
      name: 'Flour',
      match: 'keyword',
      pattern: 'unga',
      category: 'Inventory',
      priority: 100,
    }
    const refused = await admin.post('/api/v1/categorize/rules', rule)
    expect(refused.status).toBe(402)
    expect(refused.body.code).toBe('SUBSCRIPTION_SUSPENDED')
    expect((await admin.get('/api/v1/analytics/summary')).status).toBe(200)
    // Billing's own purpose header, claimed by the tenant straight at a service port, buys
    // nothing: only a hop the platform signed is believed.
    const claims = { 'x-mmp-purpose': 'invoice-payment' }
    for (const [part, path, body] of [
      ['categorizer', '/api/v1/categorize/rules', rule],
      [
        'payment',
        '/api/v1/payments/stkpush',
        {
          phone_number: '254712345678',
          amount: 10,
          account_reference: 'X',
          transaction_desc: 'x',
        },
      ],
    ] as const) {
      const direct = await api(p.url(part), adminToken, claims).post(path, body)
      expect({ part, status: direct.status, code: direct.body.code }).toEqual({
        part,
        status: 402,
        code: 'SUBSCRIPTION_SUSPENDED',
      })
      const forged = await api(p.url(part), adminToken, {
        ...claims,
        'x-mmp-hop': `${Date.now()}.forged`,
      }).post(path, body)
      expect(forged.status).toBe(402)
    }

    // Paying the invoice is still possible, and brings the tenant back.
    const pay = await admin.post(`/api/v1/billing/invoices/${invoice.id}/pay`, {
      phone_number: '254712345678',
    })
    expect(pay.status).toBe(202)
    const status = await eventually(async () => {
      const s = await admin.get(`/api/v1/payments/status/${pay.body.checkout_request_id}`)
      return s.body.status === 'success' ? s.body : null
    })
    expect(status.account_reference).toBe(invoice.number)
    expect(status.amount).toBe(Math.ceil(invoice.total))
    const paid = await eventually(async () => {
      const i = await admin.get(`/api/v1/billing/invoices/${invoice.id}`)
      return i.body.status === 'paid' ? i.body : null
    })
    expect(paid.paid_at).toBeTruthy()
    await eventually(
      async () => (await admin.get('/api/v1/billing/subscriptions/shop')).body.status === 'active',
    )
    expect((await admin.post('/api/v1/categorize/rules', rule)).status).toBe(201)
    // The fee the tenant paid the platform is not the tenant's income.
    const summary = await admin.get('/api/v1/analytics/summary')
    expect(summary.body.total_transactions).toBe(0)
  })

  it('refuses writes of a tenant the operator suspended, in every service, and keeps reads', async () => {
    const { admin } = await shop('paused')
    expect((await operator.post('/api/v1/tenants/paused/suspend')).status).toBe(200)
    const push = await admin.post('/api/v1/payments/stkpush', {
      tenant_id: 'paused',
      phone_number: '254712345678',
      amount: 10,
      account_reference: 'X',
      transaction_desc: 'X',
    })
    expect(push.status).toBe(403)
    const row = () => ({
      transactions: [
        { occurred_at: new Date().toISOString(), amount: 5, direction: 'in', description: 'x' },
      ],
    })
    expect((await admin.post('/api/v1/parser/transactions', row())).status).toBe(403)
    expect((await admin.get('/api/v1/analytics/summary')).status).toBe(200)
    expect((await operator.post('/api/v1/tenants/paused/resume')).status).toBe(200)
    expect((await admin.post('/api/v1/parser/transactions', row())).status).toBe(200)
  })
})
