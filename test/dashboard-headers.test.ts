/**
 * The dashboard's browser hardening in a real Chromium (Debian's, driven by playwright-core): the
 * page runs under its CSP with no violation, and another site cannot frame it (clickjacking).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Browser, chromium } from 'playwright-core'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

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

describe('dashboard headers in Chromium', () => {
  let p: TestPlatform
  let browser: Browser
  let attacker: ReturnType<typeof Bun.serve>

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,broker' })
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
    attacker = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response(
          `<!doctype html><h1>win a prize</h1><iframe id="victim" src="${p.gateway}/"></iframe>`,
          {
            headers: { 'content-type': 'text/html' },
          },
        ),
    })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    attacker?.stop(true)
    await p?.dispose()
  })

  it('serves the page with its CSP and no violation, so the dashboard still works', async () => {
    const page = await browser.newPage()
    const violations: string[] = []
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
    })
    const res = await page.goto(`${p.gateway}/`)
    expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(res?.headers()['x-content-type-options']).toBe('nosniff')
    expect(res?.headers()['referrer-policy']).toBe('no-referrer')
    await page.getByLabel('Email').waitFor()
    expect(violations).toEqual([])
    await page.close()
  })

  it('refuses to be framed by another site', async () => {
    const page = await browser.newPage()
    const refused = page.waitForEvent('console', {
      predicate: (m) => /frame-ancestors/.test(m.text()),
      timeout: 15_000,
    })
    await page.goto(`http://127.0.0.1:${attacker.port}/`)
    expect((await refused).text()).toContain(p.gateway)
    const frame = page.frames().find((f) => f !== page.mainFrame())!
    await frame.waitForLoadState()
    // A blocked frame holds Chromium's error page, never the dashboard's login form.
    expect(await frame.locator('#app').count()).toBe(0)
    await page.close()
  })
})
