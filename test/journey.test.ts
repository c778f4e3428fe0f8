import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * DESIGN §1, journey 2: a payment goes client → gateway → payment → simulator → callback →
 * outbox → categorizer → analytics and cashflow, billing meters it, and the tenant's webhook
 * receives a signed payment.success.
 */
describe('a payment through the whole platform', () => {
  let p: TestPlatform
  let admin: ReturnType<typeof api>
  const secret = `whsec_${Buffer.from('duka-signing-secret-0123456789ab').toString('base64')}`
  const received: Array<{ headers: Record<string, string>; body: string }> = []
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() })
      return new Response('ok')
    },
  })
  beforeAll(async () => {
    p = await startTestPlatform()
    const operator = api(p.gateway, await p.login())
    const created = await operator.post('/api/v1/tenants', {
      id: 'duka',
      name: 'Duka Moja',
      plan: 'pro',
      admin_email: 'owner@duka.test',
      admin_password: 'duka-password-1',
    })
    expect(created.status).toBe(201)
    admin = api(p.gateway, await p.login('owner@duka.test', 'duka-password-1'))
    const hook = await admin.post('/api/v1/webhooks', {
      tenant_id: 'duka',
      url: `http://127.0.0.1:${receiver.port}/hooks`,
      events: ['payment.success'],
      secret,
    })
    expect(hook.status).toBe(201)
  })
  afterAll(async () => {
    receiver.stop(true)
    await p.dispose()
  })

  it('is paid, categorized, counted in analytics and cashflow, and metered', async () => {
    const push = await admin.post('/api/v1/payments/stkpush', {
      tenant_id: 'duka',
      phone_number: '254712340000',
      amount: 150,
      account_reference: 'ORDER-1',
      transaction_desc: 'Sugar 2kg',
    })
    expect(push.status).toBe(202)
    expect(push.body).toMatchObject({ status: 'pending' })
    const id = push.body.checkout_request_id as string

    const status = await eventually(async () => {
      const s = await admin.get(`/api/v1/payments/status/${id}`)
      return s.body.status === 'success' ? s.body : null
    })
    expect(status).toMatchObject({
      checkout_request_id: id,
      amount: 150,
      phone_number: '254712340000',
      result_code: 0,
    })
    expect(status.mpesa_receipt_number).toMatch(/^[A-Z0-9]{10}$/)

    const row = await eventually(async () => {
      const page = await admin.get('/api/v1/analytics/transactions?direction=in')
      return page.body.data?.find(
        (t: { receipt_number: string }) => t.receipt_number === status.mpesa_receipt_number,
      )
    })
    expect(row).toMatchObject({
      amount: 150,
      direction: 'in',
      source: 'payment',
      category: 'Revenue',
    })

    const summary = await admin.get('/api/v1/analytics/summary')
    expect(summary.body).toMatchObject({
      total_transactions: 1,
      total_amount: 150,
      total_in: 150,
      active_days: 1,
    })

    const today = new Date().toLocaleDateString('en-CA', { timeZone: 'Africa/Nairobi' })
    const daily = await eventually(async () => {
      const d = await admin.get(`/api/v1/cashflow/daily?from=${today}&to=${today}`)
      return d.body.data?.[0]?.inflow === 150 ? d.body.data[0] : null
    })
    expect(daily).toMatchObject({ date: today, inflow: 150, outflow: 0, net: 150 })

    const usage = await eventually(async () => {
      const u = await admin.get('/api/v1/billing/usage/duka')
      return u.body.metrics?.payments?.used === 1 ? u.body : null
    })
    expect(usage.metrics.payments.used).toBe(1)

    const delivery = await eventually(async () =>
      received.find((r) => r.body.includes('payment.success')),
    )
    const verified = new Webhook(secret).verify(delivery.body, delivery.headers) as Record<
      string,
      any
    >
    expect(verified).toMatchObject({
      event: 'payment.success',
      version: 1,
      data: { transaction_id: row.id, amount: 150, phone_number: '254712340000' },
    })
    expect(new Date(verified.timestamp).toISOString()).toBe(verified.timestamp)

    const metrics = await (await fetch(`${p.gateway}/metrics`)).text()
    expect(metrics).toMatch(
      /mmp_events_published_total\{topic="mobilemoney.transactions.success"\} [1-9]/,
    )
    expect(metrics).toMatch(
      /mmp_events_handled_total\{consumer="[a-z.]+",outcome="applied"\} [1-9]/,
    )
    expect(metrics).toMatch(/mmp_webhook_/)
  })

  it('answers every collection with the list envelope', async () => {
    for (const path of [
      '/api/v1/analytics/transactions',
      '/api/v1/analytics/customers',
      '/api/v1/analytics/insights',
      '/api/v1/billing/plans',
      '/api/v1/billing/invoices',
      '/api/v1/categorize/rules',
      '/api/v1/payments',
      '/api/v1/webhooks',
      '/api/v1/webhooks/deliveries',
      '/api/v1/tenants/duka/users',
    ]) {
      const res = await admin.get(path)
      expect(res.status, path).toBe(200)
      expect(Array.isArray(res.body.data), path).toBe(true)
      expect(res.body, path).toHaveProperty('next_cursor')
      expect(typeof res.body.has_more, path).toBe('boolean')
    }
  })
})
