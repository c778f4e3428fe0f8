import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { metrics } from '../kernel/metrics.ts'
import { type Daraja, ProviderError } from './daraja.ts'
import { type PaymentKit, paymentKit } from './test-kit.ts'

/**
 * A payment whose provider answer was lost and that nothing can settle (the provider's record
 * cannot be read either) raises the operator alert once it is an hour old: a log line, a metric,
 * the operator's alerts API; and the alert clears once nothing is left unknown.
 */
describe('payments unknown for an hour', () => {
  let k: PaymentKit
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
    // Nothing listens at the provider's address: its record (Pull Transactions) cannot be read.
    k = await paymentKit({ provider, settings: { reconcileAfterS: 1 } })
  })
  afterAll(() => k.cleanup())

  const alerts = async () => {
    const res = await k.call<{
      alerts: Array<{ name: string; detail: string }>
      unanswered_over_1h: number
    }>('/api/v1/payments/alerts', { who: { tenantId: 'platform', role: 'Admin' } })
    expect(res.status).toBe(200)
    return res.body
  }

  it('raises payments_unknown after an hour and clears it when none is left', async () => {
    const res = await k.call('/api/v1/payments/stkpush', {
      who: { tenantId: 'acme', role: 'Manager', userId: 'usr_ann' },
      body: {
        phone_number: '254712300077',
        amount: 10,
        account_reference: 'INV-77',
        transaction_desc: 'Order',
      },
    })
    expect(res.body).toMatchObject({ status: 'unknown' })

    k.kit.ctx.clock.advance(30 * 60_000)
    const early = await k.payments.reconcile({ olderThanS: 0 })
    expect(early.unknown).toBeGreaterThanOrEqual(1)
    expect((await alerts()).alerts.map((a) => a.name)).not.toContain('payments_unknown')

    k.kit.ctx.clock.advance(31 * 60_000)
    const late = await k.payments.reconcile({ olderThanS: 0 })
    expect(late.failed_to_query).toBeGreaterThanOrEqual(1)
    const raised = await alerts()
    expect(raised.unanswered_over_1h).toBeGreaterThanOrEqual(1)
    expect(raised.alerts).toContainEqual(expect.objectContaining({ name: 'payments_unknown' }))
    const text = await metrics.metrics()
    expect(text).toMatch(/mmp_payments_unknown_over_1h \d*[1-9]/)
    expect(text).toMatch(/mmp_payment_alerts_total\{alert="payments_unknown"\} [1-9]/)

    // The provider's record answers again (here: it has no such payment): the push is settled
    // as failed, nothing was charged, and the alert clears.
    const db = k.kit.ctx.registry.tenant('payment', 'acme')
    db.write(() =>
      db.sqlite.query("UPDATE payments SET status = 'failed' WHERE status = 'unknown'").run(),
    )
    k.kit.ctx.clock.advance(31_000)
    await k.payments.reconcile({ olderThanS: 0 })
    expect((await alerts()).alerts.map((a) => a.name)).not.toContain('payments_unknown')
  }, 30_000)
})
