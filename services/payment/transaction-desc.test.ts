import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/payment/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createSimulator } from '../simulator/index.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'
import { testPaymentSettings } from './test-settings.ts'

/**
 * `transaction_desc` is optional, as Daraja's TransactionDesc is ("All fields apart from
 * TransactionDesc are all mandatory"): without one the push says 'Payment'; one given is still
 * held to Daraja's 13 characters.
 */
describe('an STK push without transaction_desc', () => {
  let sim: ReturnType<typeof createSimulator>
  let simUrl: string
  let kit: TestKit<PaymentSettings>
  let app: ReturnType<typeof createPaymentsApp>

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
    app = createPaymentsApp(kit.ctx, createPayments(kit.ctx))
  })
  afterAll(async () => {
    kit?.cleanup()
    await sim?.stop()
  })

  const push = async (body: Record<string, unknown>) => {
    const res = await app.handle(
      new Request('http://payment.test/api/v1/payments/stkpush', {
        method: 'POST',
        headers: {
          ...(await kit.authFor({ tenantId: 'shop', role: 'Admin' })),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ amount: 10, account_reference: 'INV-7', ...body }),
      }),
    )
    return { status: res.status, body: (await res.json()) as Record<string, any> }
  }

  it("is sent with 'Payment' and shown so", async () => {
    const r = await push({ phone_number: '254712300701' })
    expect(r.status).toBe(202)
    const seen = (await (
      await fetch(`${simUrl}/simulator/requests/${r.body.checkout_request_id}`)
    ).json()) as { request: Record<string, unknown> }
    expect(seen.request.TransactionDesc).toBe('Payment')
    const db = kit.ctx.registry.tenant('payment', 'shop').sqlite
    expect(
      db
        .query<{ transaction_desc: string }, [string]>(
          'SELECT transaction_desc FROM payments WHERE checkout_request_id = ?',
        )
        .get(r.body.checkout_request_id),
    ).toEqual({ transaction_desc: 'Payment' })
  })

  it('keeps a given one, and still refuses one over 13 characters', async () => {
    const r = await push({ phone_number: '254712300702', transaction_desc: 'Sugar 2kg' })
    expect(r.status).toBe(202)
    const seen = (await (
      await fetch(`${simUrl}/simulator/requests/${r.body.checkout_request_id}`)
    ).json()) as { request: Record<string, unknown> }
    expect(seen.request.TransactionDesc).toBe('Sugar 2kg')
    const long = await push({ phone_number: '254712300703', transaction_desc: 'fourteen chars' })
    expect(long.status).toBe(422)
    expect(long.body.errors.map((e: { field: string }) => e.field)).toEqual(['transaction_desc'])
  })
})
