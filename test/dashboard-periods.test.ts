/**
 * Periods in Chromium, on a shop whose only data is a statement that ended long ago (1–10 Mar
 * 2024): the presets anchor on the last day with data, the statement's own period is a preset,
 * a custom range compares with the days before only where the data reaches, the chart draws the
 * days with data, and the period drives the Customers, Insights and Reconciliation pages and
 * their CSV/PDF downloads. Desktop and phone sizes, axe-core; screenshots in
 * test-output/dashboard-owner/.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DESKTOP, type OwnerBrowser, openBrowser, PHONE } from './support/owner-browser.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

const OWNER = { email: 'owner@zamani.test', password: 'zamani-owner-password' }
const TENANT = 'zamani'
const STATEMENT = join(
  import.meta.dir,
  'fixtures',
  'statements',
  'org-portal',
  'utility-account-2024-03.csv',
)

describe('periods in the dashboard', () => {
  let p: TestPlatform
  let origin: string
  let b: OwnerBrowser
  let owner: ReturnType<typeof api>

  const card = (key: string) => b.page.locator(`#summary-cards [data-key="${key}"]`)
  /** Picks a preset and waits for the overview drawn for it. */
  const pick = async (preset: string) => {
    await b.page.locator('#period-preset').selectOption(preset)
    await b.page.locator('#main[aria-busy="false"]').waitFor()
    await card('total_transactions').waitFor()
  }
  const summaryOf = async (from: string, to: string) =>
    (await owner.get(`/api/v1/analytics/summary?from=${from}&to=${to}`)).body

  beforeAll(async () => {
    p = await startTestPlatform()
    origin = new URL(p.gateway).origin
    const op = api(p.gateway, await p.login())
    const created = await op.post('/api/v1/tenants', {
      id: TENANT,
      name: 'Duka la Zamani',
      plan: 'pro',
      admin_email: OWNER.email,
      admin_password: OWNER.password,
    })
    expect(created.status).toBe(201)
    const token = await p.login(OWNER.email, OWNER.password)
    owner = api(p.gateway, token)
    const form = new FormData()
    form.append('file', new Blob([readFileSync(STATEMENT)], { type: 'text/csv' }), 'march.csv')
    const imported = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    expect(imported.status).toBeLessThan(300)
    await eventually(
      async () => {
        const span = (await owner.get('/api/v1/analytics/period')).body
        return span?.last_day === '2024-03-10' ? true : undefined
      },
      20_000,
      'analytics to see the statement',
    )
    b = await openBrowser()
  }, 120_000)

  afterAll(async () => {
    await b?.close()
    await p?.dispose()
  })

  // Each test starts signed in afresh on the overview, at desktop size, on the default period.
  beforeEach(async () => {
    await b.page.setViewportSize(DESKTOP)
    await b.page.goto(`${origin}/#/overview`)
    await b.page.evaluate(() => sessionStorage.clear())
    await b.page.reload()
    await b.logIn(origin, OWNER)
    await b.page.locator('#main[aria-busy="false"]').waitFor()
  }, 60_000)

  it('anchors the last 90 days on the last day with data, and draws those days', async () => {
    expect(await b.page.locator('#period-preset').inputValue()).toBe('90d')
    expect(await b.page.locator('#period-words').textContent()).toContain('10 Mar 2024')
    const s = await summaryOf('2023-12-12', '2024-03-10')
    expect(s.total_transactions).toBeGreaterThan(20)
    expect(await card('total_transactions').getAttribute('data-value')).toBe(
      String(s.total_transactions),
    )
    // The data does not reach back 90 days before the period: no percentage from nothing.
    expect(await card('total_in').locator('.compare').textContent()).toBe(
      'not enough history to compare',
    )
    // The chart draws the days with data (from 1 Mar), not 80 empty days before them.
    const chart = b.page.locator('#cashflow-chart[data-ready="true"]')
    await chart.waitFor()
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(10)
    expect(await b.page.locator('#forecast-note').textContent()).toContain('10 Mar 2024')
    await b.shot('periods-90-days-desktop')
    expect(await b.seriousViolations()).toEqual([])
  }, 60_000)

  it("offers the statement's period and a custom range compared with the days before", async () => {
    await pick('statement')
    expect(await b.page.locator('#period-words').textContent()).toContain(
      '1 Mar 2024 – 10 Mar 2024',
    )
    const whole = await summaryOf('2024-03-01', '2024-03-10')
    expect(await card('total_transactions').getAttribute('data-value')).toBe(
      String(whole.total_transactions),
    )

    await b.page.locator('#period-preset').selectOption('custom')
    await b.page.locator('#period-from').fill('2024-03-06')
    await b.page.locator('#period-to').fill('2024-03-10')
    await b.page.locator('#period').getByRole('button', { name: 'Show' }).click()
    await b.page.locator('#period-words', { hasText: '6 Mar 2024 – 10 Mar 2024' }).waitFor()
    await b.page.locator('#main[aria-busy="false"]').waitFor()
    const now = await summaryOf('2024-03-06', '2024-03-10')
    const before = await summaryOf('2024-03-01', '2024-03-05')
    expect(await card('total_in').getAttribute('data-value')).toBe(String(now.total_in))
    const change = Math.round(((now.total_in - before.total_in) / before.total_in) * 1000) / 10
    expect(await card('total_in').locator('.compare').textContent()).toBe(
      `${change > 0 ? '+' : '-'}${Math.abs(change).toLocaleString('en-KE')}% on the 5 days before`,
    )
    await b.shot('periods-custom-desktop')

    await pick('7d')
    expect(await card('total_in').locator('.compare').textContent()).toBe(
      'not enough history to compare',
    )
    await b.page.setViewportSize(PHONE)
    // The chart redraws for the new width after the resize: wait for the page to settle.
    await eventually(
      async () => ((await b.fitsWidth()) ? true : undefined),
      10_000,
      'the page to fit a phone-sized screen',
    )
    await b.shot('periods-7-days-phone')
    expect(await b.seriousViolations()).toEqual([])
  }, 60_000)

  it('keeps the period on Customers, Insights and Reconciliation, each with its downloads', async () => {
    await pick('statement')
    await b.page.goto(`${origin}/#/customers`)
    await b.page.locator('#period-words', { hasText: '1 Mar 2024 – 10 Mar 2024' }).waitFor()
    await b.page.locator('#people').waitFor()
    const download = b.page.waitForEvent('download')
    await b.page.locator('#export-customers-csv').click()
    const csv = readFileSync((await (await download).path())!, 'utf8')
    expect(csv.split('\r\n')[0]).toBe(
      'name,phone,payments,paid_in,paid_out,first_seen,last_seen,segment',
    )
    expect(csv.split('\r\n').filter(Boolean).length).toBeGreaterThan(1)
    await b.page.locator('[data-group="agents"]').click()
    await b.page.locator('#people-table .empty, #people').first().waitFor()
    await b.shot('periods-customers')

    await b.page.goto(`${origin}/#/insights`)
    await b.page.locator('#period-words', { hasText: '1 Mar 2024 – 10 Mar 2024' }).waitFor()
    await b.page.locator('#insights li, #insights .empty').first().waitFor()
    const pdf = b.page.waitForEvent('download')
    await b.page.locator('#export-insights-pdf').click()
    expect(
      readFileSync((await (await pdf).path())!)
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-')

    // A statement-only shop: nothing live to reconcile with, said once instead of every row.
    await b.page.goto(`${origin}/#/reconciliation`)
    await b.page.locator('#reconciliation-no-live', { hasText: 'nothing recorded live' }).waitFor()
    await b.page.locator('#export-reconciliation-csv').waitFor()
    await b.shot('periods-reconciliation')
    expect(await b.seriousViolations()).toEqual([])
  }, 60_000)
})
