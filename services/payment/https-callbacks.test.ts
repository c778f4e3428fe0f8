import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { PaymentSettings } from './settings.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/**
 * Daraja production refuses http callback URLs. With `production` on and an http callback base,
 * mmp refuses the push, the disbursement, the C2B registration and the status query itself with
 * PROVIDER_MISCONFIGURED (nothing written, nothing sent), and the go-live check says so in one
 * line; with an https base the same push goes through.
 */
describe('https callback URLs in Daraja production', () => {
  let k: SimulatorKit

  beforeAll(async () => {
    k = await simulatorKit()
  })
  afterAll(() => k?.cleanup())

  /** POSTs to the service's app with these settings over the kit's. */
  const appWith = (over: Partial<PaymentSettings>) => {
    const { call } = k.serviceWith(over)
    return (path: string, body: unknown, who = { tenantId: 'shop', role: 'Admin' as const }) =>
      call(path, { method: 'POST', body, who })
  }
  const received = async (phone: string) =>
    (
      (await (await fetch(`${k.simUrl}/simulator/received?phone=${phone}&kind=stk`)).json()) as {
        count: number
      }
    ).count
  const push = (phone: string) => ({
    phone_number: phone,
    amount: 10,
    account_reference: 'INV-1',
    transaction_desc: 'Order',
  })

  it('refuses a push, a disbursement, a registration and a query with an http callback', async () => {
    const post = appWith({ production: true })
    // The other tests of this file may have written the same tenant's rows first.
    const db = k.kit.ctx.registry.tenant('payment', 'shop').sqlite
    const count = (table: string) =>
      (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    const payments = count('payments')
    const disbursements = count('disbursements')
    const requests = count('provider_requests')
    const stk = await post('/api/v1/payments/stkpush', push('254712300501'))
    expect(stk.status).toBe(502)
    expect(stk.body.code).toBe('PROVIDER_MISCONFIGURED')
    expect(stk.body.detail).toContain('mpesa.callback_base_url')
    expect(stk.body.detail).toContain('https')
    expect(await received('254712300501')).toBe(0)
    expect(count('payments')).toBe(payments)

    const b2c = await post('/api/v1/payments/b2c', {
      phone_number: '254712300502',
      amount: 10,
      remarks: 'Refund',
    })
    expect([b2c.status, b2c.body.code]).toEqual([502, 'PROVIDER_MISCONFIGURED'])
    expect(count('disbursements')).toBe(disbursements)

    const reg = await post('/api/v1/payments/c2b/register', {
      shortcode: '600910',
      response_type: 'Completed',
    })
    expect([reg.status, reg.body.code]).toEqual([502, 'PROVIDER_MISCONFIGURED'])
    const platform = k.kit.ctx.registry.platform('payment').sqlite
    expect(
      platform.query("SELECT count(*) AS n FROM c2b_shortcodes WHERE shortcode = '600910'").get(),
    ).toEqual({ n: 0 })

    const balance = await post(
      '/api/v1/payments/account-balance',
      {},
      { tenantId: 'platform', role: 'Admin' },
    )
    expect([balance.status, balance.body.code]).toEqual([502, 'PROVIDER_MISCONFIGURED'])
    expect(count('provider_requests')).toBe(requests)
  })

  it('says it in one line of the go-live check', async () => {
    const post = appWith({ production: true })
    const r = await post('/api/v1/payments/daraja/check', undefined, {
      tenantId: 'platform',
      role: 'Admin',
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.status).toBe('fail')
    const line = r.body.checks.find((c: { name: string }) => c.name === 'daraja callback url')
    expect(line.status).toBe('fail')
    expect(line.detail).toMatch(/production refuses http callback URLs/)
    expect(line.detail).not.toContain('\n')
    expect(line.fix).toContain('mpesa.callback_base_url')
  })

  it('sends the push with an https callback, and with http outside production', async () => {
    const https = appWith({ production: true, callbackBase: 'https://pay.example.test' })
    expect((await https('/api/v1/payments/stkpush', push('254712300503'))).status).toBe(202)
    expect(await received('254712300503')).toBe(1)
    const sandbox = appWith({ production: false })
    expect((await sandbox('/api/v1/payments/stkpush', push('254712300504'))).status).toBe(202)
    expect(await received('254712300504')).toBe(1)
  })
})
