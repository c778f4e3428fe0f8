import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, type TestPlatform } from './support/platform.ts'
import { type SplitPlatform, startSplitPlatform } from './support/split.ts'

/**
 * DESIGN §12: the same code as several processes. Two `mmp serve --only …` processes share an
 * external broker (Debian's mosquitto); the gateway in one reaches the payment service in the
 * other through static discovery, and events cross between them.
 */
describe('two mmp processes on one external broker', () => {
  let split: SplitPlatform
  let front: TestPlatform
  beforeAll(async () => {
    split = await startSplitPlatform()
    front = split.front
  }, 60_000)
  afterAll(() => split.dispose())

  it('takes a payment in one process and shows it in the other’s analytics', async () => {
    const operator = api(front.gateway, await front.login())
    expect(
      (
        await operator.post('/api/v1/tenants', {
          id: 'kiosk',
          name: 'Kiosk',
          admin_email: 'k@kiosk.test',
          admin_password: 'kiosk-password-1',
        })
      ).status,
    ).toBe(201)
    const admin = api(front.gateway, await front.login('k@kiosk.test', 'kiosk-password-1'))
    const push = await admin.post('/api/v1/payments/stkpush', {
      tenant_id: 'kiosk',
      phone_number: '254712345000',
      amount: 75,
      account_reference: 'SCALE',
      transaction_desc: 'Scale test',
    })
    expect(push.status).toBe(202)
    const found = await eventually(
      async () => (await admin.get('/api/v1/analytics/transactions')).body.data?.[0],
      15_000,
      'the payment in the other process’s analytics',
    )
    expect(found).toMatchObject({ amount: 75, source: 'payment', direction: 'in' })
  })
})
