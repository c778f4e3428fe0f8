/**
 * The dashboard end to end: one platform, one Pro tenant with ~500 demo transactions over 70
 * days, and headless Chromium (Debian's) driven by playwright-core on a phone-sized screen.
 * Screenshots of every page go to test-output/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { generateDemo } from '../services/parser/demo.ts'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'

const OUT = join(import.meta.dir, '..', 'test-output', 'dashboard')
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const ADMIN = { email: 'owner@duka.test', password: 'duka-owner-password' }
const VIEWER = { email: 'viewer@duka.test', password: 'duka-viewer-password' }
const ANALYST = { email: 'analyst@duka.test', password: 'duka-analyst-password' }
const TENANT = 'duka'

const digits = (s: string) => s.replace(/[^0-9]/g, '')

describe('dashboard in Chromium', () => {
  let p: TestPlatform
  let origin: string
  let adminToken: string
  let context: BrowserContext
  let page: Page
  let profile: string
  const requests: string[] = []
  let seeded = 0
  /** Who the page is signed in as (email), or null. */
  let current: string | null = null
  const shot = async (name: string) => {
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true })
    await page.screenshot({ path: join(OUT, `${name}-screen.png`) })
  }
  /** The page fits the screen's width: nothing to scroll sideways (tables scroll inside). */
  const fitsWidth = async () => {
    const [scroll, width] = await page.evaluate(() => [
      document.documentElement.scrollWidth,
      window.innerWidth,
    ])
    // On a phone an overflowing page widens the layout viewport (zoomed out): both must be 390.
    expect(width).toBe(390)
    expect(scroll).toBeLessThanOrEqual(390)
  }
  const logIn = async (who: { email: string; password: string }) => {
    await page.goto(`${origin}/#/overview`)
    // By keyboard: type into the labelled fields, Enter submits.
    await page.getByLabel('Email').focus()
    await page.keyboard.type(who.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type(who.password)
    await page.keyboard.press('Enter')
    await page.locator('#logout').waitFor()
    current = who.email
  }
  const logOut = async () => {
    await page.locator('#logout').click()
    await page.getByLabel('Email').waitFor()
    current = null
  }
  /**
   * The page on a phone's screen, signed in as `who` (or signed out): what each test starts from,
   * whichever test ran before it.
   */
  /** A view loaded afresh (the page may be on it already, showing what it read then). */
  const open = async (view: string) => {
    await page.goto(`${origin}/#/${view}`)
    await page.reload()
  }
  const as = async (who: { email: string; password: string } | null) => {
    await page.setViewportSize({ width: 390, height: 844 })
    if (current === (who?.email ?? null)) return
    if (current) {
      await page.goto(`${origin}/#/overview`)
      await logOut()
    }
    if (who) await logIn(who)
  }
  /**
   * The transactions page filtered on the category of the latest outgoing transaction: the
   * category and the first page of what the API answers for the same filter.
   */
  const filterOut = async () => {
    const admin = api(p.gateway, adminToken)
    const category = (await admin.get('/api/v1/analytics/transactions?direction=out&limit=1')).body
      .data[0].category as string
    const filters = page.getByRole('form', { name: 'Filter transactions' })
    await filters.getByLabel('Direction').selectOption('out')
    await filters.getByLabel('Category').selectOption(category)
    await filters.getByRole('button', { name: 'Apply' }).click()
    const want = (
      await admin.get(`/api/v1/analytics/transactions?direction=out&category=${category}&limit=50`)
    ).body.data as { id: string }[]
    expect(want.length).toBeGreaterThan(0)
    await page.waitForFunction(
      (n) => document.querySelectorAll('#transactions-table tbody tr').length === n,
      want.length,
    )
    return { category, want }
  }

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true })
    p = await startTestPlatform()
    origin = new URL(p.gateway).origin
    const op = api(p.gateway, await p.login())
    const created = await op.post('/api/v1/tenants', {
      id: TENANT,
      name: 'Duka Bora',
      plan: 'pro',
      admin_email: ADMIN.email,
      admin_password: ADMIN.password,
    })
    expect(created.status).toBe(201)
    const viewer = await op.post('/api/v1/auth/users', {
      tenant_id: TENANT,
      email: VIEWER.email,
      role: 'Viewer',
      password: VIEWER.password,
    })
    expect(viewer.status).toBe(201)
    const analyst = await op.post('/api/v1/auth/users', {
      tenant_id: TENANT,
      email: ANALYST.email,
      role: 'Analyst',
      password: ANALYST.password,
    })
    expect(analyst.status).toBe(201)

    adminToken = await p.login(ADMIN.email, ADMIN.password)
    const admin = api(p.gateway, adminToken)
    // 70 days of a demo shop up to yesterday (Nairobi), every 4th transaction: ~500 rows.
    const yesterday = new Date(Date.now() + 3 * 3600_000 - 86_400_000).toISOString().slice(0, 10)
    const rows = generateDemo({ days: 70, seed: 11, end: yesterday }).filter((_, i) => i % 4 === 0)
    const res = await admin.post('/api/v1/parser/transactions', { transactions: rows })
    expect(res.status).toBeLessThan(300)
    seeded = res.body.accepted
    expect(seeded).toBeGreaterThan(300)
    const summary = await eventually(
      async () => {
        const s = await admin.get('/api/v1/analytics/summary')
        return s.body?.total_transactions === seeded ? s.body : undefined
      },
      20_000,
      'analytics to count the seed',
    )
    // The chart reads cashflow: wait until it has every inflow too.
    const from = new Date(Date.now() - 89 * 86_400_000).toISOString().slice(0, 10)
    await eventually(
      async () => {
        const d = await admin.get(`/api/v1/cashflow/daily?from=${from}`)
        const inflow = (d.body?.data ?? []).reduce((s: number, x: any) => s + x.inflow * 100, 0)
        return Math.round(inflow) === Math.round(summary.total_in * 100) ? true : undefined
      },
      20_000,
      'cashflow to see the seed',
    )

    profile = mkdtempSync(join(tmpdir(), 'mmp-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      args: CHROMIUM_ARGS,
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 1,
      isMobile: true,
      hasTouch: true,
      acceptDownloads: true,
    })
    context.on('request', (r) => {
      requests.push(r.url())
    })
    page = context.pages()[0] ?? (await context.newPage())
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
    await p?.dispose()
  })

  it('logs in by keyboard and shows the summary numbers the API gives', async () => {
    // A wrong password shows the API's problem detail on the login page.
    await as(null)
    await page.goto(`${origin}/`)
    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel('Password').fill('not-the-password')
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.locator('.problem', { hasText: '401' }).waitFor()
    await shot('login-error')
    await logIn(ADMIN)
    // The seed, and a payment another test may have added: the page shows what the API says.
    const s = (await api(p.gateway, adminToken).get('/api/v1/analytics/summary')).body
    expect(s.total_transactions).toBeGreaterThanOrEqual(seeded)
    for (const key of [
      'total_transactions',
      'average_transaction',
      'active_days',
      'total_in',
      'total_out',
      'net',
    ]) {
      const el = page.locator(`#summary-cards [data-key="${key}"]`)
      await el.waitFor()
      expect(await el.getAttribute('data-value')).toBe(String(s[key]))
      const shown = (await el.locator('.card-value').textContent()) ?? ''
      const count = key === 'total_transactions' || key === 'active_days'
      expect(digits(shown)).toBe(count ? String(s[key]) : digits(Math.abs(s[key]).toFixed(2)))
    }
    // Health, customers and insights are drawn from their APIs too.
    await page.locator('#cashflow-health .card').first().waitFor()
    await page.locator('#top-customers table').waitFor()
    await page.locator('#insights li').first().waitFor()
    await expect(page.locator('.problem').count()).resolves.toBe(0)
  }, 30_000)

  it('draws the cashflow chart with the data and the forecast', async () => {
    await as(ADMIN)
    await open('overview')
    const chart = page.locator('#cashflow-chart[data-ready="true"]')
    await chart.waitFor()
    // Each day of the seed (70 days to yesterday) and 30 days of forecast.
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(70 + 30)
    const painted = await page.evaluate(() => {
      const canvas = document.querySelector('#cashflow-chart canvas') as HTMLCanvasElement
      const ctx = canvas.getContext('2d')!
      const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data
      let n = 0
      for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++
      return { n, width: canvas.width, height: canvas.height }
    })
    expect(painted.width).toBeGreaterThan(200)
    expect(painted.n).toBeGreaterThan(2000)
    // Pointing at a day reads out its figures.
    await page.locator('#cashflow-chart .u-over').hover({ position: { x: 150, y: 40 } })
    expect(await page.locator('#cashflow-chart .readout').textContent()).toMatch(
      /^\d{1,2} [A-Z][a-z]{2,3} \d{4}.*: (in|net) /,
    )
    expect(await page.locator('#cashflow-chart [role="img"]').getAttribute('aria-label')).toContain(
      'Daily cashflow from',
    )
    // The legend's swatches are painted (classes, not style attributes the CSP would block).
    const swatches = await page.evaluate(() =>
      [...document.querySelectorAll('#cashflow-chart .legend i')].map((i) => {
        const r = i.getBoundingClientRect()
        return { bg: getComputedStyle(i).backgroundColor, w: r.width, h: r.height }
      }),
    )
    expect(swatches.length).toBeGreaterThanOrEqual(6)
    for (const s of swatches) {
      expect(s.bg).not.toBe('rgba(0, 0, 0, 0)')
      expect(s.bg).not.toBe('transparent')
      expect(s.w * s.h).toBeGreaterThan(0)
    }
    expect(new Set(swatches.map((s) => s.bg)).size).toBeGreaterThanOrEqual(5)
    await fitsWidth()
    await shot('overview')
    await page
      .locator('section', { has: page.locator('#cashflow-chart') })
      .screenshot({ path: join(OUT, 'overview-chart.png') })
  }, 30_000)

  it('overrides a category in place and keeps it after a reload', async () => {
    await as(ADMIN)
    await open('transactions')
    const first = page.locator('#transactions-table select[data-transaction]').first()
    await first.waitFor()
    const id = (await first.getAttribute('data-transaction'))!
    const before = await first.inputValue()
    const next = before === 'Utilities' ? 'Rent' : 'Utilities'
    await first.selectOption(next)
    await page.locator(`select[data-transaction="${id}"][data-saved="${next}"]`).waitFor()
    await eventually(
      async () => {
        // A reload racing the page's own requests may fail; the next probe reloads again.
        try {
          await page.reload()
          const sel = page.locator(`select[data-transaction="${id}"]`)
          await sel.waitFor({ timeout: 5000 })
          return (await sel.inputValue()) === next
        } catch {
          return false
        }
      },
      15_000,
      'the override to show after a reload',
    )
    await fitsWidth()
    await shot('transactions')
  }, 30_000)

  it('pages and filters the list like the API', async () => {
    await as(ADMIN)
    await open('transactions')
    const rows = page.locator('#transactions-table tbody tr')
    await page.waitForFunction(
      () => document.querySelectorAll('#transactions-table tbody tr').length === 50,
    )
    expect(await rows.count()).toBe(50)
    await page.getByRole('button', { name: 'Load more' }).click()
    await page.waitForFunction(
      () => document.querySelectorAll('#transactions-table tbody tr').length === 100,
    )
    // Filter on the category of the latest outgoing transaction.
    const { want } = await filterOut()
    const ids = await page
      .locator('#transactions-table select[data-transaction]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-transaction')))
    expect(ids).toEqual(want.map((t) => t.id))
  }, 30_000)

  it('exports the list as CSV through the page', async () => {
    await as(ADMIN)
    await open('transactions')
    await page.locator('#transactions-table tbody tr').first().waitFor()
    const { category } = await filterOut()
    const download = page.waitForEvent('download')
    await page.locator('#export-csv').click()
    const file = await download
    expect(file.suggestedFilename()).toBe('transactions.csv')
    const text = await Bun.file((await file.path())!).text()
    expect(text.split('\n')[0]).toContain('occurred_at')
    // The export takes the filters on screen.
    const filtered = (
      await api(p.gateway, adminToken).get(
        `/api/v1/analytics/transactions?direction=out&category=${category}&limit=500`,
      )
    ).body.data
    expect(text.trim().split('\n').length).toBe(filtered.length + 1)
  }, 30_000)

  it('shows an API error as its problem detail', async () => {
    await as(ADMIN)
    await open('settings')
    const form = page.locator('#rule-form')
    await form.waitFor()
    await form.getByLabel('Name').fill('broken')
    await form.getByLabel('Match').selectOption('regex')
    await form.getByLabel('Pattern').fill('(unclosed')
    await form.getByRole('button', { name: 'Add rule' }).click()
    const problem = page.locator('.problem', { hasText: '422' })
    await problem.waitFor()
    const text = (await problem.textContent()) ?? ''
    expect(text).toContain('422')
    expect(text.toLowerCase()).toContain('pattern')
    // The users panel invites and shows the link to pass on.
    const invite = page.locator('#invite-form')
    await invite.getByLabel('Email').fill('clerk@duka.test')
    await invite.getByLabel('Role').selectOption('Analyst')
    await invite.getByRole('button', { name: 'Invite' }).click()
    await page.locator('input.invite-url').waitFor()
    await page.locator('#users-table', { hasText: 'clerk@duka.test' }).waitFor()
    await page.locator('#rules summary').click()
    await page.locator('#rules-table').waitFor()
    await fitsWidth()
    await shot('settings')
  }, 30_000)

  it('registers a webhook, shows its dead delivery and replays it', async () => {
    let answer = 500
    const received: { headers: Record<string, string>; body: string }[] = []
    const receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        received.push({ headers: Object.fromEntries(req.headers), body: await req.text() })
        return new Response(answer === 200 ? 'ok' : 'down', { status: answer })
      },
    })
    try {
      await as(ADMIN)
      await open('settings')
      const form = page.locator('#webhook-form')
      await form.waitFor()
      // No endpoint yet: a test event would go nowhere, so its button is off and says why.
      const trigger = page.locator('#trigger-form')
      const send = trigger.getByRole('button', { name: 'Send test event' })
      expect(await send.isDisabled()).toBe(true)
      await page.locator('#trigger-hint').waitFor()
      await form.getByLabel('URL').fill(`http://127.0.0.1:${receiver.port}/hook`)
      // No secret typed: the API makes one and the page shows it this once.
      await form.getByLabel('low.balance.alert').check()
      expect(await form.getByLabel('payment.success').isChecked()).toBe(true)
      await form.getByRole('button', { name: 'Register' }).click()
      await page.locator('#webhooks-table', { hasText: `127.0.0.1:${receiver.port}` }).waitFor()
      const secret = (await page.locator('#webhook-secret').textContent())!
      expect(secret.length).toBeGreaterThanOrEqual(24)
      await page.locator('#copy-webhook-secret').waitFor()
      expect(await send.isEnabled()).toBe(true)
      expect(await page.locator('#trigger-hint').isHidden()).toBe(true)
      await shot('settings-webhook-secret')
      const hooks = (await api(p.gateway, adminToken).get('/api/v1/webhooks')).body.data
      expect(hooks[0]).toMatchObject({ events: ['payment.success', 'low.balance.alert'] })
      expect(JSON.stringify(hooks)).not.toContain(secret)
      await page.reload()
      await page.locator('#webhooks-table', { hasText: `127.0.0.1:${receiver.port}` }).waitFor()
      expect(await page.locator('#webhook-secret').count()).toBe(0)

      await trigger.getByLabel('Test event').selectOption('low.balance.alert')
      await trigger.getByRole('button', { name: 'Send test event' }).click()
      await page.getByText('low.balance.alert queued for 1 endpoint(s).').waitFor()
      // Retries run out (0 s, 200 ms, 400 ms in tests): the delivery is dead.
      const admin = api(p.gateway, adminToken)
      await eventually(
        async () => {
          const d = (await admin.get('/api/v1/webhooks/deliveries?status=dead')).body
          return d?.data?.length === 1 ? true : undefined
        },
        20_000,
        'the delivery to die',
      )
      await page.locator('#refresh-deliveries').click()
      const row = page.locator('#deliveries-table tr', { hasText: 'low.balance.alert' })
      await row.getByText('dead').waitFor()
      await shot('settings-webhooks')

      answer = 200
      await row.getByRole('button', { name: /^Replay/ }).click()
      await eventually(
        async () => {
          const d = (await admin.get('/api/v1/webhooks/deliveries?status=delivered')).body
          return d?.data?.length === 1 ? true : undefined
        },
        20_000,
        'the replay to be delivered',
      )
      await page.locator('#refresh-deliveries').click()
      await page
        .locator('#deliveries-table tr', { hasText: 'low.balance.alert' })
        .getByText('delivered')
        .waitFor()
      const last = received.at(-1)!
      expect(last.headers['webhook-signature']).toStartWith('v1,')
      expect(JSON.parse(last.body).event).toBe('low.balance.alert')
    } finally {
      receiver.stop(true)
    }
  }, 40_000)

  it('requests an STK push on the simulator and watches it turn successful', async () => {
    await as(ADMIN)
    const admin = api(p.gateway, adminToken)
    const before = (await admin.get('/api/v1/analytics/summary')).body.total_transactions
    await page.goto(`${origin}/#/payments`)
    const form = page.locator('#stk-form')
    await form.waitFor()
    await form.getByLabel('Customer phone').fill('254712345678')
    await form.getByLabel('Amount (KES)').fill('150')
    await form.getByLabel('Reference').fill('DASH1')
    await form.getByLabel('Description').fill('Dashboard')
    const earlier = await page.locator('.problem').count()
    await form.getByRole('button', { name: 'Request payment' }).click()
    const outcome = await Promise.race([
      page
        .locator('[data-status="success"]')
        .waitFor({ timeout: 20_000 })
        .then(() => 'success'),
      page
        .locator('.problem')
        .nth(earlier)
        .waitFor({ timeout: 20_000 })
        .then(async () => `problem: ${await page.locator('.problem').nth(earlier).textContent()}`),
    ])
    await shot('payments')
    if (outcome !== 'success')
      throw new Error(
        `the STK push did not succeed (is the payment service merged?) — the page showed ${outcome}`,
      )
    await page.locator('#recent-payments', { hasText: 'DASH1' }).waitFor()
    // The paid request becomes a transaction; wait for it so later numbers are settled.
    await eventually(
      async () => {
        const s = await admin.get('/api/v1/analytics/summary')
        return s.body?.total_transactions === before + 1 ? true : undefined
      },
      20_000,
      'the payment to reach analytics',
    )
  }, 40_000)

  it('lets the operator pick a tenant and see its numbers', async () => {
    await as(OPERATOR)
    // The seed and whatever payment another test added: compare with what the API says now.
    const op = api(p.gateway, await p.login())
    const s = (await op.get(`/api/v1/analytics/summary?tenant_id=${TENANT}`)).body
    expect(s.total_transactions).toBeGreaterThanOrEqual(seeded)
    // The tenant list carries each tenant's figures.
    await page
      .locator('#tenant-list tr', { hasText: 'Duka Bora' })
      .locator('td[data-label="Transactions"]', { hasText: String(s.total_transactions) })
      .waitFor()
    await shot('operator-tenants')
    // Picking a tenant on the Tenants page opens its overview.
    await page.getByRole('link', { name: 'Tenants' }).click()
    await page.locator('#tenant-list').waitFor()
    const picker = page.locator('#tenant-picker')
    await picker.locator(`option[value="${TENANT}"]`).waitFor({ state: 'attached' })
    expect(await picker.locator('option[value="platform"]').count()).toBe(0)
    await page.locator('#tenant-picker').selectOption(TENANT)
    const cell = page.locator('#summary-cards [data-key="total_transactions"]')
    await cell.waitFor()
    expect(await cell.getAttribute('data-value')).toBe(String(s.total_transactions))
    await page.locator('#cashflow-chart[data-ready="true"]').waitFor()
    await fitsWidth()
    await shot('operator-overview')
    // The same page on a laptop screen, for the record.
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.waitForFunction(
      () => (document.querySelector('#cashflow-chart canvas') as HTMLCanvasElement).width > 900,
    )
    await shot('operator-overview-desktop')
    await page.setViewportSize({ width: 390, height: 844 })
    // A new Free tenant with nothing yet: an empty page that says so, and no error.
    const kiosk = await op.post('/api/v1/tenants', {
      id: 'kiosk',
      name: 'Kiosk',
      plan: 'free',
      admin_email: 'owner@kiosk.test',
      admin_password: 'kiosk-owner-password',
    })
    expect(kiosk.status).toBe(201)
    await page.reload()
    await page
      .locator('#tenant-picker')
      .locator('option[value="kiosk"]')
      .waitFor({ state: 'attached' })
    await page.locator('#tenant-picker').selectOption('kiosk')
    await page.locator('#cashflow-chart', { hasText: 'No transactions yet' }).waitFor()
    await page.locator('#summary-cards [data-key="total_transactions"][data-value="0"]').waitFor()
    await page.locator('#main[aria-busy="false"]').waitFor()
    expect(await page.locator('.problem').count()).toBe(0)
    await shot('operator-empty-tenant')
    await page.goto(`${origin}/#/tenants`)
    await page.locator('#tenant-list').waitFor()
    await fitsWidth()
  }, 30_000)

  it('shows a Viewer no button it cannot use', async () => {
    await as(VIEWER)
    await page.locator('#summary-cards [data-key="total_transactions"]').waitFor()
    expect(await page.locator('nav a', { hasText: 'Settings' }).count()).toBe(0)
    await page.goto(`${origin}/#/payments`)
    await page.locator('#recent-payments').waitFor()
    expect(await page.locator('#stk-form').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Request payment' }).count()).toBe(0)
    await shot('viewer-payments')
    await page.goto(`${origin}/#/transactions`)
    await page.locator('#transactions-table').waitFor()
    expect(await page.locator('#transactions-table select').count()).toBe(0)
    expect(await page.locator('#export-csv, #export-pdf').count()).toBe(0)
    await fitsWidth()
    await shot('viewer-transactions')
    // Settings by its address falls back to the overview.
    await page.goto(`${origin}/#/settings`)
    await page.locator('#summary-cards').waitFor()
    expect(await page.locator('#rule-form, #invite-form').count()).toBe(0)
  }, 30_000)

  it('gives an Analyst override and export but no payment form or Settings', async () => {
    await as(ANALYST)
    await open('transactions')
    await page.locator('#transactions-table select[data-transaction]').first().waitFor()
    expect(await page.locator('#export-csv').count()).toBe(1)
    expect(await page.locator('nav a', { hasText: 'Settings' }).count()).toBe(0)
    await page.goto(`${origin}/#/payments`)
    // The list (a table once a payment was made, a sentence before), the page done loading.
    await page.locator('#recent-payments').waitFor()
    await page.locator('#main[aria-busy="false"]').waitFor()
    expect(await page.locator('#stk-form').count()).toBe(0)
  }, 30_000)

  it('is usable by keyboard with a visible focus', async () => {
    await as(ANALYST)
    await open('overview')
    // A fresh load: no focus moved yet, so Tab starts at the top of the document.
    await page.reload()
    await page.locator('#summary-cards [data-key]').first().waitFor()
    await page.locator('body').focus()
    await page.keyboard.press('Tab')
    const skip = await page.evaluate(() => document.activeElement?.textContent)
    expect(skip).toBe('Skip to content')
    await page.keyboard.press('Tab')
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement
      const style = getComputedStyle(el)
      return { tag: el.tagName, text: el.textContent, outline: style.outlineStyle }
    })
    expect(focused).toEqual({ tag: 'A', text: 'Overview', outline: 'solid' })
    // Enter on a focused link follows it.
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await page.locator('#transactions-table').waitFor()
    expect(page.url()).toEndWith('#/transactions')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')
    expect(await page.title()).toBe('Transactions · mmp')
  }, 30_000)

  it('refreshes an expired access token without a blank screen', async () => {
    await as(ANALYST)
    await open('overview')
    await page.evaluate(() => {
      const s = JSON.parse(localStorage.getItem('mmp.session')!)
      s.access_token = 'expired.token.value'
      localStorage.setItem('mmp.session', JSON.stringify(s))
    })
    await page.goto(`${origin}/#/overview`)
    await page.reload()
    await page.locator('#summary-cards [data-key="total_transactions"]').waitFor()
    expect(await page.locator('.problem').count()).toBe(0)
    const token = await page.evaluate(
      () => JSON.parse(localStorage.getItem('mmp.session')!).access_token,
    )
    expect(token).not.toBe('expired.token.value')
  }, 30_000)

  it('lists invoices, downloads one as PDF and pays it by STK push', async () => {
    // The period ends: the operator runs the billing cycle as of then, which issues an invoice.
    const op = api(p.gateway, await p.login())
    const sub = (await op.get(`/api/v1/billing/subscriptions/${TENANT}`)).body
    const cycle = await op.post('/api/v1/billing/run-cycle', {
      at: new Date(Date.parse(sub.current_period_end) + 1000).toISOString(),
    })
    expect(cycle.status).toBe(200)
    const invoices = (await op.get(`/api/v1/billing/invoices?tenant_id=${TENANT}`)).body.data
    const inv = invoices.find((i: any) => i.status === 'open')
    expect(inv).toBeTruthy()

    await as(ADMIN)
    await open('settings')
    const row = page.locator('#invoices-table tr', { hasText: inv.number })
    await row.waitFor()
    const download = page.waitForEvent('download')
    await row.getByRole('button', { name: `PDF ${inv.number}` }).click()
    const pdf = await download
    expect(pdf.suggestedFilename()).toBe(`${inv.number}.pdf`)
    expect((await Bun.file((await pdf.path())!).text()).startsWith('%PDF')).toBe(true)

    await row.getByLabel(`M-Pesa phone for ${inv.number}`).fill('254712345679')
    await row.getByRole('button', { name: `Pay ${inv.number}` }).click()
    await page.locator('#invoices [role="status"]', { hasText: 'Payment prompt' }).waitFor()
    await eventually(
      async () => {
        const i = (await op.get(`/api/v1/billing/invoices/${inv.id}`)).body
        return i.status === 'paid' ? true : undefined
      },
      20_000,
      'the invoice to be paid',
    )
    // No reload: the page polls the invoice after the push, as the payments page polls a payment.
    await page.locator(`#invoice-status-${inv.id}[data-status="paid"]`).waitFor({ timeout: 10_000 })
    await page.locator('#invoices [role="status"]', { hasText: 'is paid' }).waitFor()
    expect(await page.getByRole('button', { name: `Pay ${inv.number}` }).count()).toBe(0)
    await fitsWidth()
    await shot('settings-invoices')
    await page
      .locator('section', { has: page.locator('#invoices') })
      .screenshot({ path: join(OUT, 'settings-invoices-panel.png') })
    await page.setViewportSize({ width: 1280, height: 900 })
    await shot('settings-desktop')
    await page.setViewportSize({ width: 390, height: 844 })
  }, 40_000)

  it('shows the plan, its price and usage against its limits, and changes the plan', async () => {
    await as(ADMIN)
    await open('settings')
    const panel = page.locator('#subscription')
    await panel.locator('#usage-table').waitFor()
    expect(await panel.locator('#subscription-plan').textContent()).toContain(
      'Plan Pro · KES 2,500.00 a month',
    )
    const usage = (await api(p.gateway, adminToken).get(`/api/v1/billing/usage/${TENANT}`)).body
    const used = usage.metrics.transactions.used as number
    const limit = usage.metrics.transactions.limit as number
    const row = panel.locator('#usage-table tr', { hasText: 'Transactions this period' })
    expect(digits((await row.locator('td').nth(1).textContent())!)).toBe(String(used))
    expect(digits((await row.locator('td').nth(2).textContent())!)).toBe(String(limit))
    expect(Number(await row.locator('meter').getAttribute('value'))).toBe(Math.min(used, limit))
    await fitsWidth()
    await panel.screenshot({ path: join(OUT, 'settings-subscription.png') })

    await panel.getByLabel('New plan').selectOption('enterprise')
    await panel.getByRole('button', { name: 'Change plan' }).click()
    await panel.locator('#subscription-plan', { hasText: 'Plan Enterprise' }).waitFor()
    const sub = (await api(p.gateway, adminToken).get(`/api/v1/billing/subscriptions/${TENANT}`))
      .body
    expect(sub.plan).toBe('enterprise')
    expect(await panel.locator('option', { hasText: 'Downgrade to Pro' }).count()).toBe(1)
    await panel.screenshot({ path: join(OUT, 'settings-subscription-changed.png') })
  }, 30_000)

  it('makes no request outside the platform', async () => {
    // Every page of its own visit, and whatever the other tests made the browser ask for.
    const from = requests.length
    await as(ADMIN)
    for (const view of ['overview', 'transactions', 'payments', 'settings']) {
      await page.goto(`${origin}/#/${view}`)
      await page.locator('#main[aria-busy="false"]').waitFor()
    }
    expect(requests.length).toBeGreaterThan(from)
    const foreign = requests.filter(
      (u) => !u.startsWith(`${origin}/`) && !u.startsWith(`blob:${origin}/`),
    )
    expect(foreign).toEqual([])
    expect(requests.filter((u) => u.endsWith('/favicon.ico'))).toEqual([])
  }, 30_000)
})
