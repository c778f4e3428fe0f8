import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/payment/migrations.ts'
import { metrics } from '../kernel/metrics.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { type Daraja, ProviderError } from './daraja.ts'
import { createPaymentsApp } from './routes.ts'
import { createPayments } from './service.ts'
import type { PaymentSettings } from './settings.ts'
import { testPaymentSettings } from './test-settings.ts'

/**
 * A payment whose provider answer was lost and that nothing can settle (the provider's record
 * cannot be read either) raises the operator alert once it is an hour old: a log line, a metric,
 * the operator's alerts API; and the alert clears once nothing is left unknown.
 */
describe('payments unknown for an hour', () => {
  let kit: TestKit<PaymentSettings>
  let payments: ReturnType<typeof createPayments>
  let app: ReturnType<typeof createPaymentsApp>
  const answer: 'timeout' | 'accept' = 'timeout'
  const provider: Daraja = {
    stkPush: async () => {
      if (answer === 'timeout')
        throw new ProviderError(0, null, 'provider unreachable: no answer within 10000 ms', true)
      return {
        MerchantRequestID: 'm-1',
        CheckoutRequestID: `ws_CO_ok_${Date.now()}`,
        ResponseCode: '0',
        ResponseDescription: 'ok',
      }
    },
    stkQuery: async () => ({ state: 'processing' }),
    b2c: async () => {
      throw new Error('not used')
    },
  }

  beforeAll(async () => {
    kit = await createTestKit('payment', {
      migrations,
      // Nothing listens there: the provider's record (Pull Transactions) cannot be read.
      settings: testPaymentSettings({
        providerUrl: 'http://127.0.0.1:9',
        callbackBase: 'http://payment.test',
        reconcileAfterS: 1,
      }),
    })
    payments = createPayments(kit.ctx, { provider })
    app = createPaymentsApp(kit.ctx, payments)
  })
  afterAll(() => kit.cleanup())

  const alerts = async () => {
    const res = await app.handle(
      new Request('http://payment.test/api/v1/payments/alerts', {
        headers: await kit.authFor({ tenantId: 'platform', role: 'Admin' }),
      }),
    )
    expect(res.status).toBe(200)
    return (await res.json()) as {
      alerts: Array<{ name: string; detail: string }>
      unanswered_over_1h: number
    }
  }

  it('raises payments_unknown after an hour and clears it when none is left', async () => {
    const auth = {
      ...(await kit.authFor({ tenantId: 'acme', role: 'Manager', userId: 'usr_ann' })),
      'content-type': 'application/json',
    }
    const res = await app.handle(
      new Request('http://payment.test/api/v1/payments/stkpush', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          phone_number: '254712300077',
          amount: 10,
          account_reference: 'INV-77',
          transaction_desc: 'Order',
        }),
      }),
    )
    expect(await res.json()).toMatchObject({ status: 'unknown' })

    kit.ctx.clock.advance(30 * 60_000)
    const early = await payments.reconcile({ olderThanS: 0 })
    expect(early.unknown).toBeGreaterThanOrEqual(1)
    expect((await alerts()).alerts.map((a) => a.name)).not.toContain('payments_unknown')

    kit.ctx.clock.advance(31 * 60_000)
    const late = await payments.reconcile({ olderThanS: 0 })
    expect(late.failed_to_query).toBeGreaterThanOrEqual(1)
    const raised = await alerts()
    expect(raised.unanswered_over_1h).toBeGreaterThanOrEqual(1)
    expect(raised.alerts).toContainEqual(expect.objectContaining({ name: 'payments_unknown' }))
    const text = await metrics.metrics()
    expect(text).toMatch(/mmp_payments_unknown_over_1h \d*[1-9]/)
    expect(text).toMatch(/mmp_payment_alerts_total\{alert="payments_unknown"\} [1-9]/)

    // The provider's record answers again (here: it has no such payment): the push is settled
    // as failed, nothing was charged, and the alert clears.
    const db = kit.ctx.registry.tenant('payment', 'acme')
    db.write(() =>
      db.sqlite.query("UPDATE payments SET status = 'failed' WHERE status = 'unknown'").run(),
    )
    kit.ctx.clock.advance(31_000)
    await payments.reconcile({ olderThanS: 0 })
    expect((await alerts()).alerts.map((a) => a.name)).not.toContain('payments_unknown')
  }, 30_000)
})
