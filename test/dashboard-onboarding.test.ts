/**
 * A new shop owner's first steps in Chromium: the getting-started checklist ticks each step from
 * what the platform holds (a till registered, a statement imported, staff invited, a payment
 * taken, a webhook added) and goes once all are done; empty pages say what will appear; problems
 * read in plain words. Desktop and phone sizes, axe-core with no serious violation. Screenshots
 * go to test-output/dashboard-owner/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DESKTOP, type OwnerBrowser, openBrowser, PHONE } from './support/owner-browser.ts'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants, ownerOf } from './support/tenants.ts'

const STATEMENT = join(
  import.meta.dir,
  'fixtures',
  'statements',
  'org-portal',
  'utility-account-2024-03.csv',
)

describe('a new owner’s first steps in the dashboard', () => {
  let p: TestPlatform
  let operator: string
  let origin: string
  let b: OwnerBrowser
  let receiver: ReturnType<typeof Bun.serve>

  /** The overview's checklist once it has read the platform, and whether a step is ticked. */
  const stepDone = async (step: string) => {
    await b.page.goto(`${origin}/#/overview`)
    await b.page.locator('#onboarding-box[data-ready="true"]').waitFor({ state: 'attached' })
    return (
      (await b.page.locator(`#onboarding li[data-step="${step}"]`).getAttribute('data-done')) ===
      'true'
    )
  }
  const noSeriousViolations = async () => expect(await b.seriousViolations()).toEqual([])

  /** A new shop of the test's own, its owner signed in at desktop size: no step done yet. */
  const newOwner = async (id: string) => {
    await createTenants(p.gateway, operator, { id, name: 'Mama Mboga', plan: 'pro' })
    const { admin_email: email, admin_password: password } = ownerOf(id)
    await b.page.setViewportSize(DESKTOP)
    await b.logIn(origin, { email, password })
  }

  // The checklist's steps as an owner takes them in the dashboard.
  const registerTill = async (shortcode: string) => {
    await b.page.goto(`${origin}/#/settings`)
    await b.page.locator('#c2b-shortcodes .empty').waitFor()
    const form = b.page.locator('#c2b-form')
    await form.getByLabel('Till or paybill number').fill(shortcode)
    await form.getByRole('button', { name: 'Register' }).click()
    await b.page.locator('#c2b-table', { hasText: shortcode }).waitFor()
    await b.page.locator('#c2b-notice', { hasText: `${shortcode} is registered` }).waitFor()
  }
  const importStatement = async () => {
    await b.page.goto(`${origin}/#/import`)
    await b.page.locator('#import-form input[type=file]').setInputFiles({
      name: 'statement.csv',
      mimeType: 'text/csv',
      buffer: readFileSync(STATEMENT),
    })
    await b.page.locator('#import-form').getByRole('button', { name: 'Import' }).click()
    await b.page.locator('#import-status', { hasText: 'Imported' }).waitFor({ timeout: 20_000 })
  }
  const inviteStaff = async () => {
    await b.page.goto(`${origin}/#/settings`)
    const invite = b.page.locator('#invite-form')
    await invite.getByLabel('Email').fill('cashier@mama-mboga.test')
    await invite.getByLabel('Role').selectOption('Manager')
    await invite.getByRole('button', { name: 'Invite' }).click()
    await b.page.locator('input.invite-url').waitFor()
  }
  const payForm = () => b.page.locator('#stk-form')
  const takePayment = async () => {
    await b.page.goto(`${origin}/#/payments`)
    await payForm().getByLabel('Customer phone').fill('0712345678')
    await payForm().getByLabel('Amount (KES)').fill('150')
    await payForm().getByLabel('Reference').fill('FIRST1')
    await payForm().getByRole('button', { name: 'Request payment' }).click()
    await b.page.locator('#payment-status [data-status="success"]').waitFor({ timeout: 20_000 })
  }

  beforeAll(async () => {
    p = await startTestPlatform()
    origin = new URL(p.gateway).origin
    operator = await p.login()
    receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ok') })
    b = await openBrowser()
  }, 120_000)

  afterAll(async () => {
    await b?.close()
    receiver?.stop(true)
    await p?.dispose()
  })

  it('shows a new tenant the checklist and empty states that say what will appear', async () => {
    await newOwner('mboga-empty')
    await b.page.locator('#onboarding-box[data-ready="true"]').waitFor()
    expect(await b.page.locator('#onboarding-progress').textContent()).toContain('0 of 5 done')
    expect(await b.page.locator('#onboarding li[data-done="false"]').count()).toBe(5)
    await b.page.locator('#overview-empty', { hasText: 'import an M-PESA statement' }).waitFor()
    await b.page.locator('#cashflow-chart', { hasText: 'No transactions yet' }).waitFor()
    await b.page.locator('#top-customers .empty').waitFor()
    // No "Runway: not burning" for a shop with nothing yet: a sentence instead.
    expect(await b.page.locator('#cashflow-health').textContent()).toContain('import a statement')
    await b.page.locator('#main[aria-busy="false"]').waitFor()
    expect(await b.page.locator('.problem').count()).toBe(0)
    await b.shot('onboarding-empty-desktop')
    await noSeriousViolations()
    await b.page.setViewportSize(PHONE)
    expect(await b.fitsWidth()).toBe(true)
    await b.shot('onboarding-empty-phone')
    await noSeriousViolations()
  }, 60_000)

  it('registers the till in Settings and ticks it', async () => {
    await newOwner('mboga-till')
    expect(await stepDone('till')).toBe(false)
    await registerTill('600555')
    await b.shot('onboarding-till-registered')
    await noSeriousViolations()
    expect(await stepDone('till')).toBe(true)
  }, 60_000)

  it('imports a statement and ticks it', async () => {
    await newOwner('mboga-import')
    await importStatement()
    expect(await stepDone('statement')).toBe(true)
  }, 60_000)

  it('invites staff and ticks it', async () => {
    await newOwner('mboga-staff')
    await inviteStaff()
    expect(await stepDone('staff')).toBe(true)
  }, 60_000)

  it('says what is wrong with a phone in plain words, then takes a first payment', async () => {
    await newOwner('mboga-pay')
    await b.page.goto(`${origin}/#/payments`)
    await payForm().getByLabel('Customer phone').fill('12345')
    await payForm().getByLabel('Amount (KES)').fill('150')
    await payForm().getByLabel('Reference').fill('FIRST1')
    await payForm().getByRole('button', { name: 'Request payment' }).click()
    const problem = b.page.locator('.problem').first()
    await problem.waitFor()
    const words = (await problem.locator('strong').textContent()) ?? ''
    expect(words).not.toMatch(/\b4\d\d\b|Unprocessable|Expected|\^/)
    expect(await problem.textContent()).toContain('Phone:')
    expect(await problem.textContent()).not.toContain('Expected string')
    await b.shot('onboarding-plain-problem')

    await takePayment()
    expect(await b.page.locator('#payment-status').textContent()).toMatch(
      /^KES 150\.00 received from 0712 345 678, receipt [A-Z0-9]+\.$/,
    )
    await b.page.locator('#recent-payments', { hasText: '0712 345 678' }).waitFor()
    await b.shot('onboarding-first-payment')
    expect(await stepDone('payment')).toBe(true)
  }, 60_000)

  it('adds a webhook, and the checklist goes once every step is done', async () => {
    await newOwner('mboga-done')
    await registerTill('600556')
    await importStatement()
    await inviteStaff()
    await takePayment()
    expect(await stepDone('webhook')).toBe(false)
    await b.page.goto(`${origin}/#/settings`)
    const form = b.page.locator('#webhook-form')
    await form.getByLabel('URL').fill(`http://127.0.0.1:${receiver.port}/hook`)
    await form.getByRole('button', { name: 'Register' }).click()
    await b.page.locator('#webhooks-table', { hasText: `127.0.0.1:${receiver.port}` }).waitFor()
    await b.page.goto(`${origin}/#/overview`)
    await b.page.locator('#onboarding-box[data-ready="true"]').waitFor({ state: 'attached' })
    expect(await b.page.locator('#onboarding').count()).toBe(0)
    await b.page.locator('#main[aria-busy="false"]').waitFor()
    await b.shot('onboarding-done-desktop')
    await noSeriousViolations()
  }, 90_000)
})
