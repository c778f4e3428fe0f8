import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

async function eventually<T>(
  probe: () => Promise<T | null | undefined | false>,
  ms = 10_000,
): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > end) throw new Error('condition not met in time')
    await Bun.sleep(50)
  }
}

/** Billing with the real tenant and payment services behind it (DESIGN §10). */
describe('billing across services', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  let admin: ReturnType<typeof api>
  beforeAll(async () => {
    p = await startTestPlatform()
    operator = api(p.gateway, await p.login())
    const created = await operator.post('/api/v1/tenants', {
      id: 'shop',
      name: 'Corner Shop',
      admin_email: 'owner@shop.test',
      admin_password: 'shop-password-1',
    })
    expect(created.status).toBe(201)
    expect(created.body.plan).toBe('free')
    admin = api(p.gateway, await p.login('owner@shop.test', 'shop-password-1'))
  })
  afterAll(() => p.dispose())

  it('upgrades through billing’s door: the tenant moves to Pro and its own folder', async () => {
    const sub = await eventually(async () => {
      const s = await admin.get('/api/v1/billing/subscriptions/shop')
      return s.status === 200 ? s.body : null
    })
    expect(sub).toMatchObject({ tenant_id: 'shop', plan: 'free' })
    const upgraded = await admin.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'shop',
      plan: 'pro',
    })
    expect(upgraded.status).toBe(200)
    expect(upgraded.body).toMatchObject({ tenant_id: 'shop', plan: 'pro' })
    const tenant = await admin.get('/api/v1/tenants/shop')
    expect(tenant.body).toMatchObject({ plan: 'pro', isolation: 'schema' })
    expect(tenant.body.features.advanced_analytics).toBe(true)
  })

  it('invoices the period and is paid by STK push through the payment service', async () => {
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
  })
})
