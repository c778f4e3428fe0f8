import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

/**
 * Billing's `payments` usage counts every request the provider took, once. A push whose answer
 * and callback were both lost (the simulator's test phone 254711115004) never records the
 * provider's id; reconciliation finds it in M-Pesa's own record (Pull Transactions) and settles
 * it charged. It is metered then: once, and not again when reconciliation runs again.
 */
describe('a lost push settled by reconciliation is metered once', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  let shop: ReturnType<typeof api>

  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,payment,billing,simulator,broker',
      env: { MMP_RECONCILE_AFTER: '1' },
    })
    operator = api(p.gateway, await p.login())
    shop = await createTenantAdmin(p, { id: 'lost-metered', plan: 'pro' })
  }, 60_000)
  afterAll(() => p?.dispose())

  const used = async () =>
    (await operator.get('/api/v1/billing/usage/lost-metered')).body.metrics.payments.used as number

  it('meters it when it settles charged, and only once', async () => {
    const before = await used()
    const res = await shop.post('/api/v1/payments/stkpush', {
      phone_number: '254711115004',
      amount: 210,
      account_reference: 'LOST-M',
    })
    expect(res.status).toBe(202)
    expect(res.body.status).toBe('unknown')
    const id = res.body.checkout_request_id as string
    await eventually(
      async () => {
        await operator.post('/api/v1/payments/reconcile', {})
        return (await shop.get(`/api/v1/payments/status/${id}`)).body.status === 'success'
      },
      20_000,
      'reconciliation to find the lost push',
    )
    await eventually(async () => (await used()) === before + 1, 20_000, 'the push metered')
    // Reconciling again settles nothing again, so nothing is metered again.
    expect((await operator.post('/api/v1/payments/reconcile', {})).status).toBe(200)
    await eventually(async () => (await used()) === before + 1, 5_000, 'still once')
    expect(await used()).toBe(before + 1)
  }, 60_000)
})
