import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/payment/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createSimulator } from '../simulator/index.ts'
import { liveToken } from './daraja-transport.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'
import { testPaymentSettings } from './test-settings.ts'

/**
 * Daraja (and the simulator) invalidates an app's previous OAuth token whenever a new one is
 * generated. The go-live check therefore uses the token the payment service holds: afterwards
 * the service's token is the same and still accepted, and the next push needs no new token.
 */
describe('the go-live check and the payment service token', () => {
  let sim: ReturnType<typeof createSimulator>
  let simUrl: string
  let kit: TestKit<PaymentSettings>

  beforeAll(async () => {
    sim = createSimulator({ delayMs: 20, version: 'test' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    simUrl = `http://127.0.0.1:${sim.server!.port}`
    kit = await createTestKit('payment', {
      migrations,
      settings: testPaymentSettings({ providerUrl: simUrl, callbackBase: 'http://payment.test' }),
    })
    kit.createTenant('shop')
  })
  afterAll(async () => {
    kit?.cleanup()
    await sim?.stop()
  })

  /** Whether the simulator still takes a token (an STK query with it is not 404.001.03). */
  const accepted = async (token: string) => {
    const res = await fetch(`${simUrl}/mpesa/stkpushquery/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    })
    const body = (await res.json()) as { errorCode?: string }
    return body.errorCode !== '404.001.03'
  }

  it('neither replaces nor invalidates the token payments hold', async () => {
    const app = createPaymentsApp(kit.ctx, createPayments(kit.ctx))
    const call = async (path: string, body: unknown, tenantId = 'shop') => {
      const res = await app.handle(
        new Request(`http://payment.test${path}`, {
          method: 'POST',
          headers: {
            ...(await kit.authFor({ tenantId, role: 'Admin' })),
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        }),
      )
      return { status: res.status, body: (await res.json()) as Record<string, any> }
    }
    const push = (phone: string) =>
      call('/api/v1/payments/stkpush', {
        phone_number: phone,
        amount: 10,
        account_reference: 'INV-1',
        transaction_desc: 'Order',
      })
    const creds = {
      baseUrl: simUrl,
      consumerKey: kit.ctx.settings.credentials.consumerKey,
      consumerSecret: kit.ctx.settings.credentials.consumerSecret,
    }
    expect((await push('254712300601')).status).toBe(202)
    const held = liveToken(creds)
    expect(held).not.toBeNull()
    expect(await accepted(held!)).toBe(true)

    const check = await call('/api/v1/payments/daraja/check', undefined, 'platform')
    expect(check.status).toBe(200)
    const oauth = check.body.checks.find((c: { name: string }) => c.name === 'daraja oauth')
    expect(oauth).toMatchObject({ status: 'ok' })
    expect(oauth.detail).toContain('accepts the token payments hold')

    expect(liveToken(creds)).toBe(held)
    expect(await accepted(held!)).toBe(true)
    expect((await push('254712300602')).status).toBe(202)
    expect(liveToken(creds)).toBe(held)
  })
})
