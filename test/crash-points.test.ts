import { afterEach, describe, expect, it } from 'bun:test'
import { crashed, DISARMED, rearm } from './support/faults.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { signToken } from './support/tokens.ts'

let p: TestPlatform | undefined
afterEach(async () => {
  await p?.dispose()
  p = undefined
})

describe('a crash at a fault point', () => {
  it('webhook.after_send: a delivery the receiver took is sent again with the same webhook-id', async () => {
    const hits: string[] = []
    const receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch(request) {
        hits.push(request.headers.get('webhook-id') ?? '')
        return new Response('ok')
      },
    })
    try {
      p = await startTestPlatform({ only: 'gateway,auth,tenant,webhook,broker' })
      const operator = api(p.gateway, await p.login())
      await createTenants(p.gateway, await p.login(), 'acme')
      const endpoint = await operator.post('/api/v1/webhooks', {
        tenant_id: 'acme',
        url: `http://127.0.0.1:${receiver.port}/hook`,
        events: ['payment.success'],
      })
      expect(endpoint.status).toBe(201)
      await rearm(p, 'webhook.after_send')
      const token = await signToken(p.dataDir, { tenantId: 'platform', userId: 'usr_operator' })
      const trigger = await api(p.gateway, token)
        .post('/api/v1/webhooks/trigger', {
          tenant_id: 'acme',
          event: 'payment.success',
          data: { amount: 1 },
        })
        .catch(() => null)
      await crashed(p, 'webhook.after_send')
      expect(trigger?.status).toBe(202)
      expect(hits).toHaveLength(1)

      await p.restart(DISARMED)
      await eventually(async () => hits.length >= 2, 15_000, 'the repeat delivery')
      expect(new Set(hits).size).toBe(1)
      expect(hits[0]).toMatch(/^msg_/)
      const delivered = await eventually(async () => {
        const r = await operator.get(`/api/v1/webhooks/deliveries?endpoint_id=${endpoint.body.id}`)
        return r.body?.data?.every((d: { status: string }) => d.status === 'delivered') && r.body
      })
      expect(delivered.data).toHaveLength(1)
    } finally {
      receiver.stop(true)
    }
  }, 60_000)

  it('billing.cycle.after_invoice: the restarted cycle invoices each period once', async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,billing,broker' })
    const operator = await p.login()
    // A Free plan costs nothing and gets no invoice.
    await createTenants(p.gateway, operator, { id: 'acme', plan: 'pro' })
    const sub = await eventually(async () => {
      const s = await api(p!.gateway, operator).get('/api/v1/billing/subscriptions/acme')
      return s.status === 200 ? s.body : null
    })
    // Two periods have ended by `at`: the crash comes after the first invoice commits.
    const end = new Date(sub.current_period_end).getTime()
    const at = new Date(end + 40 * 86_400_000).toISOString()
    await rearm(p, 'billing.cycle.after_invoice')
    const token = await signToken(p.dataDir, { tenantId: 'platform', userId: 'usr_operator' })
    await api(p.gateway, token)
      .post('/api/v1/billing/run-cycle', { at })
      .catch(() => null)
    await crashed(p, 'billing.cycle.after_invoice')

    await p.restart(DISARMED)
    const again = await api(p.gateway, token).post('/api/v1/billing/run-cycle', { at })
    expect(again.status).toBe(200)
    const invoices = await api(p.gateway, token).get('/api/v1/billing/invoices?tenant_id=acme')
    const periods = (invoices.body.data as Array<{ period_start: string }>).map(
      (i) => i.period_start,
    )
    expect(periods.length).toBeGreaterThanOrEqual(2)
    expect(new Set(periods).size).toBe(periods.length)
  }, 60_000)
})
