import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { PaymentSettings } from './settings.ts'
import { type SimulatorKit, simulatorKit } from './test-kit.ts'

/**
 * The operator's go-live check (`POST /api/v1/payments/daraja/check`) calls the configured
 * provider, here the simulator on its own port: every line ok with the right settings; with a
 * passkey that is not the shortcode's, the credentials line fails in one line saying what M-Pesa
 * answered and what to change. Only the platform operator may run it.
 */
describe('the Daraja go-live check over HTTP', () => {
  let k: SimulatorKit

  beforeAll(async () => {
    k = await simulatorKit({ delayMs: 50 })
  })
  afterAll(() => k?.cleanup())

  /** The payment service's app, configured with these provider settings. */
  const serviceWith = async (over: Partial<PaymentSettings['credentials']> = {}) => {
    const credentials = { ...k.kit.ctx.settings.credentials, ...over }
    const { call } = k.serviceWith({ credentials })
    return (who: { tenantId: string; role: 'Admin' | 'Viewer' } = OPERATOR) =>
      call<Report>('/api/v1/payments/daraja/check', { method: 'POST', who })
  }
  const OPERATOR = { tenantId: 'platform', role: 'Admin' as const }
  type Report = {
    status: string
    live: boolean
    checks: Array<{ name: string; status: string; detail: string; fix?: string }>
  }
  const byName = (r: Report) => Object.fromEntries(r.checks.map((c) => [c.name, c]))

  it('answers ok on every line with the provider’s own credentials', async () => {
    const check = await serviceWith()
    const { status, body } = await check()
    expect(status).toBe(200)
    expect(body).toMatchObject({ status: 'ok', live: false })
    expect(body.checks.map((c) => [c.name, c.status])).toEqual([
      ['daraja callback url', 'ok'],
      ['daraja oauth', 'ok'],
      ['daraja stk credentials', 'ok'],
      ['daraja pull', 'ok'],
    ])
  })

  it('fails the credentials line, in one line, for a wrong passkey', async () => {
    const check = await serviceWith({ passkey: 'a-wrong-passkey' })
    const { status, body } = await check()
    expect(status).toBe(200)
    expect(body.status).toBe('fail')
    const line = byName(body)['daraja stk credentials']!
    expect(line.status).toBe('fail')
    expect(line.detail).toContain('Wrong credentials')
    expect(line.detail.split('\n')).toHaveLength(1)
    expect(line.fix).toContain('mpesa.passkey')
    expect(byName(body)['daraja oauth']?.status).toBe('ok')
  })

  it('fails the OAuth line and stops there for a wrong consumer secret', async () => {
    const check = await serviceWith({ consumerSecret: 'not-the-secret' })
    const { body } = await check()
    expect(body.checks.map((c) => [c.name, c.status])).toEqual([
      ['daraja callback url', 'ok'],
      ['daraja oauth', 'fail'],
    ])
  })

  it('is refused to a tenant, even its Admin', async () => {
    const check = await serviceWith()
    const res = await check({ tenantId: 'acme', role: 'Admin' })
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: 'FORBIDDEN' })
  })
})
