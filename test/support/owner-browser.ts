/**
 * Chromium for the owner's dashboard tests: a fresh profile, a page, screenshots in
 * test-output/dashboard-owner/, and axe-core's check of what the page shows (its source evaluated
 * through the DevTools protocol, which the dashboard's CSP does not govern).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'

export const OWNER_OUT = join(import.meta.dir, '..', '..', 'test-output', 'dashboard-owner')
export const DESKTOP = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844 }

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

export interface OwnerBrowser {
  page: Page
  context: BrowserContext
  shot(name: string): Promise<void>
  /** axe-core's serious and critical violations of the page as it is now (ids and targets). */
  seriousViolations(): Promise<string[]>
  /** Whether the page fits the window's width (tables scroll inside their own box). */
  fitsWidth(): Promise<boolean>
  logIn(origin: string, who: { email: string; password: string }): Promise<void>
  close(): Promise<void>
}

export async function openBrowser(): Promise<OwnerBrowser> {
  mkdirSync(OWNER_OUT, { recursive: true })
  const profile = mkdtempSync(join(tmpdir(), 'mmp-owner-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    viewport: DESKTOP,
    deviceScaleFactor: 1,
    acceptDownloads: true,
  })
  const page = context.pages()[0] ?? (await context.newPage())
  return {
    page,
    context,
    async shot(name) {
      await page.screenshot({ path: join(OWNER_OUT, `${name}.png`), fullPage: true })
    },
    async seriousViolations() {
      await page.evaluate(axeSource)
      const result = (await page.evaluate(() =>
        (window as unknown as { axe: { run: (o: unknown) => Promise<unknown> } }).axe.run({
          resultTypes: ['violations'],
        }),
      )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }
      return result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
    },
    async fitsWidth() {
      const [scroll, width] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        window.innerWidth,
      ])
      return scroll <= width
    },
    async logIn(origin, who) {
      await page.goto(`${origin}/#/overview`)
      if (await page.locator('#logout').count()) {
        await page.locator('#logout').click()
      }
      await page.getByLabel('Email').fill(who.email)
      await page.getByLabel('Password').fill(who.password)
      await page.getByRole('button', { name: 'Log in' }).click()
      await page.locator('#logout').waitFor()
    },
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
