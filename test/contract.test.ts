import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { contractChecker } from './support/contract.ts'
import {
  api,
  eventually,
  onExchange,
  type RecordedExchange,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * The document cannot drift: a representative journey through the gateway (tenant, import,
 * analytics, payment, webhook, billing, and the errors on the way), every answer checked against
 * `/openapi.json` — status documented, body valid, no field the document does not name. With
 * `MMP_CONTRACT_LOG` set, every answer the rest of the e2e suite recorded there is checked too.
 */
describe('every answer matches /openapi.json', () => {
  let p: TestPlatform
  let check: ReturnType<typeof contractChecker>
  const seen: RecordedExchange[] = []

  beforeAll(async () => {
    p = await startTestPlatform()
    check = contractChecker(await (await fetch(`${p.gateway}/openapi.json`)).json())
    onExchange((e) => seen.push(e))
  })
  afterAll(async () => {
    onExchange(undefined)
    await p.dispose()
  })

  it('documents each answer of a journey through the platform', async () => {
    const from = seen.length
    const operator = api(p.gateway, await p.login())
    expect((await api(p.gateway).get('/api/v1/analytics/summary')).status).toBe(401)
    const created = await operator.post('/api/v1/tenants', {
      id: 'kiosk',
      name: 'Kiosk Mbili',
      plan: 'pro',
      admin_email: 'owner@kiosk.test',
      admin_password: 'kiosk-password-1',
    })
    expect(created.status).toBe(201)
    await operator.get('/api/v1/tenants')
    await operator.get('/api/v1/tenants/kiosk')
    await operator.get('/api/v1/tenants/ghost-tenant')
    const admin = api(p.gateway, await p.login('owner@kiosk.test', 'kiosk-password-1'))
    await admin.get('/api/v1/auth/me')
    const rows = Array.from({ length: 5 }, (_, i) => ({
      // Inside the window every door keeps (2007 to a day ahead): a week ago.
      occurred_at: new Date(Date.now() - 7 * 86_400_000 + i * 60_000).toISOString(),
      amount: 100 + i,
      direction: i % 2 ? 'out' : 'in',
      counterparty_name: `Customer ${i}`,
      description: 'sale',
      receipt_number: `RCT${1000 + i}`,
    }))
    expect((await admin.post('/api/v1/parser/transactions', { transactions: rows })).status).toBe(
      200,
    )
    await admin.post('/api/v1/parser/transactions', { transactions: [{ amount: 'x' }] })
    await eventually(
      async () => (await admin.get('/api/v1/analytics/transactions')).body?.data?.length === 5,
      10_000,
      'the import in analytics',
    )
    await admin.get('/api/v1/analytics/summary')
    await admin.get('/api/v1/analytics/trends')
    await admin.get('/api/v1/analytics/customers')
    await admin.get('/api/v1/categorize/rules')
    await admin.get('/api/v1/cashflow/daily')
    const push = await admin.post('/api/v1/payments/stkpush', {
      phone_number: '0712 340 000',
      amount: 150,
      account_reference: 'ORDER-1',
      transaction_desc: 'Sugar 2kg',
    })
    expect(push.status).toBe(202)
    await admin.get(`/api/v1/payments/status/${push.body.checkout_request_id}`)
    await admin.get('/api/v1/payments')
    await admin.post('/api/v1/payments/stkpush', { phone_number: '12', amount: 0 })
    const hook = await admin.post('/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['payment.success'],
    })
    expect(hook.status).toBe(201)
    await admin.get('/api/v1/webhooks')
    await admin.get(`/api/v1/webhooks/${hook.body.id}`)
    await admin.get('/api/v1/webhooks/deliveries')
    await admin.delete(`/api/v1/webhooks/${hook.body.id}`)
    await admin.get('/api/v1/webhooks/whk_missing')
    await admin.get('/api/v1/billing/plans')
    const sub = await admin.get('/api/v1/billing/subscriptions/kiosk')
    await admin.get('/api/v1/billing/usage/kiosk')
    await admin.get('/api/v1/tenants/kiosk/usage')
    const at = new Date(new Date(sub.body.current_period_end).getTime() + 3_600_000).toISOString()
    await operator.post('/api/v1/billing/run-cycle', { at })
    const invoices = await admin.get('/api/v1/billing/invoices')
    if (invoices.body?.data?.[0])
      await admin.get(`/api/v1/billing/invoices/${invoices.body.data[0].id}`)
    await admin.delete('/api/v1/tenants/kiosk')

    const journey = seen.slice(from)
    expect(journey.flatMap(check)).toEqual([])
    expect(journey.length).toBeGreaterThan(30)
  }, 60_000)

  it('refuses an undocumented field, a wrong type and an undocumented status', async () => {
    const operator = await p.login()
    await createTenants(p.gateway, operator, 'contract-shop')
    const from = seen.length
    expect((await api(p.gateway, operator).get('/api/v1/tenants/contract-shop')).status).toBe(200)
    const tenant = seen.slice(from).find((e) => e.path === '/api/v1/tenants/contract-shop')!
    expect(check(tenant)).toEqual([])
    expect(check({ ...tenant, body: { ...(tenant.body as object), surprise: 1 } })[0]).toContain(
      'surprise',
    )
    expect(check({ ...tenant, body: { ...(tenant.body as object), name: 42 } })).toHaveLength(1)
    expect(check({ ...tenant, status: 201 })[0]).toContain('not documented')
  })

  it('documents every answer the e2e suite recorded in MMP_CONTRACT_LOG', () => {
    const log = process.env.MMP_CONTRACT_LOG
    if (!log || !existsSync(log)) return
    // The platform's API answers only: the simulator's test helpers, /health and the documents
    // themselves are not API operations, and an unknown route's 404 is right by definition.
    const recorded = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RecordedExchange)
      .filter((e) => e.path.startsWith('/api/v1/'))
    const violations = recorded
      .flatMap(check)
      .filter((v) => !/the path is not documented/.test(v) || !/→ 40[45]/.test(v))
    expect(recorded.length).toBeGreaterThan(0)
    expect(violations).toEqual([])
  })
})
