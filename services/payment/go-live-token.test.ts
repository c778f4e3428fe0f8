import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { liveToken } from './daraja-transport.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/**
 * Daraja (and the simulator) invalidates an app's previous OAuth token whenever a new one is
 * generated. The go-live check therefore uses the token the payment service holds: afterwards
 * the service's token is the same and still accepted, and the next push needs no new token.
 */
describe('the go-live check and the payment service token', () => {
  let k: SimulatorKit

  beforeAll(async () => {
    k = await simulatorKit()
  })
  afterAll(() => k?.cleanup())

  /** Whether the simulator still takes a token (an STK query with it is not 404.001.03). */
  const accepted = async (token: string) => {
    const res = await fetch(`${k.simUrl}/mpesa/stkpushquery/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    })
    const body = (await res.json()) as { errorCode?: string }
    return body.errorCode !== '404.001.03'
  }

  it('neither replaces nor invalidates the token payments hold', async () => {
    const call = (path: string, body: unknown, tenantId = 'shop') =>
      k.call(path, { method: 'POST', body, who: { tenantId, role: 'Admin' } })
    const push = (phone: string) =>
      call('/api/v1/payments/stkpush', {
        phone_number: phone,
        amount: 10,
        account_reference: 'INV-1',
        transaction_desc: 'Order',
      })
    const creds = {
      baseUrl: k.simUrl,
      consumerKey: k.kit.ctx.settings.credentials.consumerKey,
      consumerSecret: k.kit.ctx.settings.credentials.consumerSecret,
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
