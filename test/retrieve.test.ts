/**
 * Issue 18: every listed resource can be read back by id, and another tenant's id answers exactly
 * like a missing one (404); errors say what to fix; webhook bodies carry `type` and, from
 * /trigger, `test: true`; the event catalogue is served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { WEBHOOK_EVENTS } from '../schema/vocabulary.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

describe('retrieve by id, errors that say what to fix, webhook envelope', () => {
  let p: TestPlatform
  let receiver: ReturnType<typeof Bun.serve>
  const received: Array<Record<string, unknown>> = []
  let a: ReturnType<typeof api>
  let b: ReturnType<typeof api>
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    receiver = Bun.serve({
      port: 0,
      fetch: async (req) => {
        received.push((await req.json()) as Record<string, unknown>)
        return new Response('ok')
      },
    })
    p = await startTestPlatform({
      env: {
        MMP_WEBHOOK_ALLOW_INSECURE: '1',
        MMP_RATE_LIMIT_FREE: '1000000',
        MMP_RATE_LIMIT_IP: '1000000',
      },
    })
    const operator = await p.login()
    await createTenants(p.gateway, operator, 'get-a', 'get-b')
    a = api(p.gateway, await p.login('owner@get-a.test', 'get-a-Owner-Passphrase-42'))
    b = api(p.gateway, await p.login('owner@get-b.test', 'get-b-Owner-Passphrase-42'))

    const hook = await a.post('/api/v1/webhooks', {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: ['payment.success'],
    })
    ids.webhook = hook.body.id
    const trigger = await a.post('/api/v1/webhooks/trigger', {
      event: 'payment.success',
      data: { amount: 1 },
    })
    ids.delivery = trigger.body.deliveries[0]
    ids.rule = (
      await a.post('/api/v1/categorize/rules', {
        name: 'Landlord',
        match: 'keyword',
        pattern: 'landlord',
        category: 'Rent',
      })
    ).body.id
    const pay = await a.post('/api/v1/payments/stkpush', {
      phone_number: '254708374149',
      amount: 10,
      account_reference: 'GET-1',
      transaction_desc: 'get test',
    })
    ids.checkout = pay.body.checkout_request_id
    ids.b2c = (
      await a.post('/api/v1/payments/b2c', {
        phone_number: '254708374149',
        amount: 10,
        remarks: 'refund',
      })
    ).body.id
    await a.post('/api/v1/parser/transactions', {
      transactions: [
        {
          occurred_at: '2026-01-05T09:00:00Z',
          amount: 250,
          direction: 'in',
          description: 'retrieve me',
        },
      ],
    })
    ids.transaction = await eventually(async () => {
      const r = await a.get('/api/v1/analytics/transactions?q=retrieve')
      return r.body?.data?.[0]?.id as string | undefined
    })
    const list = await a.get('/api/v1/payments')
    ids.paymentId = list.body.data[0].id
  }, 60_000)
  afterAll(async () => {
    await p?.dispose()
    receiver?.stop(true)
  })

  const reads = () => [
    `/api/v1/analytics/transactions/${ids.transaction}`,
    `/api/v1/payments/${ids.paymentId}`,
    `/api/v1/payments/${ids.checkout}`,
    `/api/v1/payments/status/${ids.checkout}`,
    `/api/v1/payments/b2c/${ids.b2c}`,
    `/api/v1/webhooks/${ids.webhook}`,
    `/api/v1/webhooks/deliveries/${ids.delivery}`,
    `/api/v1/categorize/rules/${ids.rule}`,
  ]

  it("reads each resource by id for its tenant, and answers another tenant's id like a missing one", async () => {
    for (const path of reads()) {
      const own = await a.get(path)
      expect({ path, status: own.status }).toEqual({ path, status: 200 })
      const other = await b.get(path)
      const missing = await b.get(path.replace(/[^/]+$/, 'xyz_missing0000'))
      expect({ path, status: other.status, code: other.body.code }).toEqual({
        path,
        status: 404,
        code: missing.body.code,
      })
    }
    const txn = await a.get(`/api/v1/analytics/transactions/${ids.transaction}`)
    expect(txn.body).toMatchObject({ id: ids.transaction, amount: 250, description: 'retrieve me' })
    const payment = await a.get(`/api/v1/payments/${ids.paymentId}`)
    expect(payment.body).toMatchObject({ id: ids.paymentId, checkout_request_id: ids.checkout })
  })

  it('answers 404 problem+json for an invoice id the tenant does not have', async () => {
    const res = await b.get('/api/v1/billing/invoices/inv_missing')
    expect(res).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } })
  })

  it('refuses an unknown category filter with 422 listing the categories', async () => {
    const res = await a.get('/api/v1/analytics/transactions?category=Nope')
    expect(res.status).toBe(422)
    expect(res.body.errors[0]).toMatchObject({ field: 'category' })
    expect(res.body.errors[0].message).toContain('Revenue, Inventory, Rent')
  })

  it('lists allowed values of an enum and names the query parameter', async () => {
    const rule = await a.post('/api/v1/categorize/rules', {
      name: 'x',
      match: 'keyword',
      pattern: 'x',
      category: 'Nope',
    })
    expect(rule.status).toBe(422)
    expect(JSON.stringify(rule.body)).not.toContain("'string'")
    expect(rule.body.errors).toContainEqual(
      expect.objectContaining({ field: 'category', message: expect.stringContaining('Revenue') }),
    )
    const page = await a.get('/api/v1/analytics/transactions?limit=9999')
    expect(page.status).toBe(422)
    expect(page.body.errors[0].field).toBe('limit')
  })

  it('creates a plan whose omitted limits are unlimited, and says each problem once', async () => {
    const operator = api(p.gateway, await p.login())
    const made = await operator.post('/api/v1/billing/plans', {
      id: 'partial',
      name: 'Partial',
      price: 10,
      limits: { transactions: 100 },
    })
    expect(made.status).toBe(201)
    expect(made.body.limits).toEqual({
      transactions: 100,
      statements: null,
      users: null,
      webhook_endpoints: null,
    })
    const bad = await operator.post('/api/v1/billing/plans', {
      name: 'Bad',
      price: 10,
      limits: { transactions: 'many' },
    })
    expect(bad.status).toBe(422)
    const fields = bad.body.errors.map((e: { field: string }) => e.field)
    expect(new Set(fields).size).toBe(fields.length)
  })

  it('sends type (= event) and test: true in a triggered event', async () => {
    const body = await eventually(() => received.find((r) => r.event === 'payment.success'))
    expect(body).toMatchObject({ type: 'payment.success', event: 'payment.success', test: true })
  })

  it('serves the event catalogue with a JSON Schema per event', async () => {
    const res = await a.get('/api/v1/webhooks/event-types')
    expect(res.status).toBe(200)
    expect(res.body.data.map((e: { name: string }) => e.name).sort()).toEqual(
      [...WEBHOOK_EVENTS].sort(),
    )
    for (const e of res.body.data) {
      expect(e).toMatchObject({ version: 1, schema: { type: 'object' } })
      expect(e.description.length).toBeGreaterThan(10)
    }
  })
})
