import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { createSimulator } from '../services/simulator/index.ts'
import { metricValue } from './support/metrics.ts'
import {
  api,
  eventually,
  OPERATOR,
  pickOffset,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

const root = join(import.meta.dir, '..')

/**
 * A platform whose M-Pesa settings the provider refuses (a passkey that is not the shortcode's):
 * the push fails at once with a clear code instead of staying `unknown`, the operator is alerted
 * (log, metric, API, `mmp doctor`), and `mmp doctor --daraja` says what is wrong in one line,
 * and nothing once the settings are right.
 */
describe('the provider refuses the platform M-Pesa settings', () => {
  let p: TestPlatform
  let sim: ReturnType<typeof createSimulator>
  let simUrl: string
  let env: Record<string, string>
  let shop: ReturnType<typeof api>

  beforeAll(async () => {
    // The provider: Daraja's passkey for the shortcode is not the one mmp is configured with.
    sim = createSimulator({ delayMs: 50, version: 'test', passkey: 'the-real-passkey' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    simUrl = `http://127.0.0.1:${sim.server!.port}`
    const offset = await pickOffset()
    env = { MMP_SIMULATOR_URL: simUrl, MPESA_PASSKEY: 'a-wrong-passkey' }
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,payment,broker',
      offset,
      env,
    })
    shop = await createTenantAdmin(p, { id: 'refused-shop', plan: 'pro' })
  }, 60_000)

  afterAll(async () => {
    await p?.dispose()
    await sim?.stop()
  })

  const doctor = async (extra: string[], over: Record<string, string> = {}) => {
    const proc = Bun.spawn(
      [process.execPath, join(root, 'cmd/main.ts'), 'doctor', '--json', ...extra],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_PORT_OFFSET: String(p.offset),
          MMP_OPERATOR_PASSWORD: OPERATOR.password,
          ...env,
          ...over,
        },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
    const report = JSON.parse(out) as {
      checks: Array<{ name: string; status: string; detail: string }>
    }
    return { code, by: Object.fromEntries(report.checks.map((c) => [c.name, c])) }
  }

  it('fails the push at once with PROVIDER_MISCONFIGURED and alerts the operator', async () => {
    const res = await shop.post(
      '/api/v1/payments/stkpush',
      {
        phone_number: '254712398765',
        amount: 100,
        account_reference: 'ORDER-1',
        transaction_desc: 'Order 1',
      },
      { 'idempotency-key': 'refused-1' },
    )
    expect(res.status).toBe(502)
    expect(res.headers.get('content-type')).toContain('application/problem+json')
    expect(res.body).toMatchObject({ code: 'PROVIDER_MISCONFIGURED', status: 502 })
    expect(res.body.detail).toContain('Wrong credentials')
    const payment = await shop.get(`/api/v1/payments/status/${res.body.payment_id}`)
    expect(payment.body).toMatchObject({ status: 'failed' })
    expect(payment.body.result_desc).toContain('500.001.1001 Wrong credentials')
    expect(payment.body.result_message).toContain('nothing was charged')

    const operator = api(p.gateway, await p.login())
    const alerts = await operator.get('/api/v1/payments/alerts')
    expect(alerts.status).toBe(200)
    expect(alerts.body.alerts).toContainEqual(
      expect.objectContaining({ name: 'provider_credentials' }),
    )
    expect(
      await metricValue(p.gateway, 'mmp_payment_alerts_total', { alert: 'provider_credentials' }),
    ).toBeGreaterThanOrEqual(1)
    expect(p.logs()).toContain('payment alert')
    // The key is free again: nothing was charged, a retry is a new attempt.
    const retry = await shop.post(
      '/api/v1/payments/stkpush',
      {
        phone_number: '254712398765',
        amount: 100,
        account_reference: 'ORDER-1',
        transaction_desc: 'Order 1',
      },
      { 'idempotency-key': 'refused-1' },
    )
    expect(retry.status).toBe(502)
    expect(retry.body.payment_id).not.toBe(res.body.payment_id)
  })

  it('is named by mmp doctor, and mmp doctor --daraja says what is wrong in one line', async () => {
    // A push the provider refuses raises the alert (whatever ran before).
    const refused = await shop.post('/api/v1/payments/stkpush', {
      phone_number: '254712398766',
      amount: 100,
      account_reference: 'ORDER-2',
      transaction_desc: 'Order 2',
    })
    expect(refused.status).toBe(502)
    await eventually(
      async () =>
        (await api(p.gateway, await p.login()).get('/api/v1/payments/alerts')).body.alerts?.length,
      5000,
      'the alert',
    )
    const plain = await doctor([])
    expect(plain.by['payment alert provider_credentials']?.status).toBe('fail')

    const checked = await doctor(['--daraja'])
    expect(checked.code).toBe(1)
    expect(checked.by['daraja oauth']?.status).toBe('ok')
    expect(checked.by['daraja stk credentials']).toMatchObject({ status: 'fail' })
    expect(checked.by['daraja stk credentials']!.detail).toContain('Wrong credentials')
    expect(checked.by['daraja stk credentials']!.detail.split('\n')).toHaveLength(1)

    const badKeys = await doctor(['--daraja'], { MPESA_CONSUMER_SECRET: 'not-the-secret' })
    expect(badKeys.by['daraja oauth']).toMatchObject({ status: 'fail' })

    const good = await doctor(['--daraja'], { MPESA_PASSKEY: 'the-real-passkey' })
    expect(good.by['daraja oauth']?.status).toBe('ok')
    expect(good.by['daraja stk credentials']?.status).toBe('ok')
    expect(good.by['daraja pull']?.status).toBe('ok')
  })
})
