/**
 * The operator's plan picker follows a tier move the platform answers 202 for: it shows the move
 * still running, asks its job (GET /tenants/{id}/jobs/{job}) until it ends, then says where the
 * tenant moved. The request is made to answer 202 at once with `Prefer: respond-async`, as a move
 * longer than a few seconds would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { api, OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run']

describe('dashboard: a tier move answered 202', () => {
  let p: TestPlatform
  let context: BrowserContext
  let page: Page
  let profile: string
  const answers: Array<{ method: string; url: string; status: number }> = []

  beforeAll(async () => {
    p = await startTestPlatform()
    await createTenants(p.gateway, await p.login(), { id: 'duka-ndogo', plan: 'free' })
    profile = mkdtempSync(join(tmpdir(), 'mmp-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      args: CHROMIUM_ARGS,
      viewport: { width: 1366, height: 900 },
    })
    context.on('response', (r) =>
      answers.push({ method: r.request().method(), url: r.url(), status: r.status() }),
    )
    page = context.pages()[0] ?? (await context.newPage())
    // The move answers with its job at once, whatever its length.
    await page.route('**/api/v1/tenants/*/upgrade', (route) =>
      route.continue({ headers: { ...route.request().headers(), prefer: 'respond-async' } }),
    )
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    if (profile) rmSync(profile, { recursive: true, force: true })
    await p?.dispose()
  })

  it('shows the move running, follows its job and shows where the tenant moved', async () => {
    const origin = new URL(p.gateway).origin
    await page.goto(`${origin}/#/overview`)
    await page.getByLabel('Email').fill(OPERATOR.email)
    await page.getByLabel('Password').fill(OPERATOR.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.locator('#logout').waitFor()
    await page.goto(`${origin}/#/tenants`)
    const select = page.locator('select[data-plan-of="duka-ndogo"]')
    await select.selectOption('pro')
    const notice = page.locator('#operator-notice')
    await notice.getByText('Moving duka-ndogo to pro: still running').waitFor()
    await notice.getByText('duka-ndogo moved from free to pro.').waitFor()
    expect(await select.inputValue()).toBe('pro')
    expect(await page.locator('.problem').count()).toBe(0)

    const move = answers.find((a) => a.method === 'PUT' && a.url.endsWith('/upgrade'))
    expect(move?.status).toBe(202)
    const polls = answers.filter((a) => /\/api\/v1\/tenants\/duka-ndogo\/jobs\/job_/.test(a.url))
    expect(polls.length).toBeGreaterThan(0)
    expect(polls.every((a) => a.method === 'GET' && a.status === 200)).toBe(true)
    const op = api(p.gateway, await p.login())
    expect((await op.get('/api/v1/tenants/duka-ndogo')).body).toMatchObject({ plan: 'pro' })
  }, 60_000)
})
