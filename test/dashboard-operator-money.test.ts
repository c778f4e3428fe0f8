/**
 * The operator's "Money and Daraja" panel on a platform whose M-Pesa passkey is not the
 * shortcode's: a push refused for it raises `provider_credentials`, which the panel lists in plain
 * words (what happened, what to do); "Check Daraja" runs the go-live check through the gateway
 * and shows its failing line. axe-core finds no serious violation on the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createSimulator } from '../services/simulator/index.ts'
import { type OwnerBrowser, openBrowser } from './support/owner-browser.ts'
import { OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

describe('dashboard: the operator’s money alerts and Daraja check', () => {
  let p: TestPlatform
  let sim: ReturnType<typeof createSimulator>
  let b: OwnerBrowser

  beforeAll(async () => {
    // The provider's passkey for the shortcode is not the one mmp is configured with.
    sim = createSimulator({ delayMs: 50, version: 'test', passkey: 'the-real-passkey' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    p = await startTestPlatform({
      env: {
        MMP_SIMULATOR_URL: `http://127.0.0.1:${sim.server!.port}`,
        MPESA_PASSKEY: 'a-wrong-passkey',
      },
    })
    const shop = await createTenantAdmin(p, { id: 'refused-duka', plan: 'pro' })
    const push = await shop.post(
      '/api/v1/payments/stkpush',
      {
        phone_number: '254712398765',
        amount: 100,
        account_reference: 'ORDER-1',
        transaction_desc: 'Order 1',
      },
      { 'idempotency-key': 'refused-duka-1' },
    )
    expect(push.body).toMatchObject({ code: 'PROVIDER_MISCONFIGURED' })
    b = await openBrowser()
  }, 120_000)

  afterAll(async () => {
    await b?.close()
    await p?.dispose()
    await sim?.stop()
  })

  it('lists provider_credentials in plain words and shows the check’s failing line', async () => {
    const origin = new URL(p.gateway).origin
    await b.logIn(origin, OPERATOR)
    await b.page.goto(`${origin}/#/tenants`)
    const panel = b.page.locator('section.panel', {
      has: b.page.getByRole('heading', { name: 'Money and Daraja' }),
    })
    const alert = panel.locator('[data-alert="provider_credentials"]')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('M-Pesa refuses the platform’s settings')
    expect(await alert.textContent()).toContain('What to do:')
    expect(await alert.textContent()).toContain('Wrong credentials')

    await panel.getByRole('button', { name: 'Check Daraja' }).click()
    const report = panel.locator('#daraja-check')
    await report.waitFor()
    expect(await report.getAttribute('data-check-status')).toBe('fail')
    const line = report.locator('tr', { hasText: 'daraja stk credentials' })
    expect(await line.locator('td').nth(1).textContent()).toBe('Failed')
    expect(await line.textContent()).toContain('Wrong credentials')
    expect(await line.textContent()).toContain('mpesa.passkey')
    const oauth = report.locator('tr', { hasText: 'daraja oauth' })
    expect(await oauth.locator('td').nth(1).textContent()).toBe('OK')
    expect(await b.page.locator('.problem').count()).toBe(0)
    await b.shot('operator-money-and-daraja')
    expect(await b.seriousViolations()).toEqual([])
  }, 60_000)
})
