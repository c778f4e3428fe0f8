/**
 * Makes the README's screenshot, docs/img/overview.png: a platform on a temporary data dir, a
 * demo tenant with four months of a shop's history (`mmp demo seed`), and the dashboard's
 * overview as its owner sees it, in headless Chromium (Debian's, through playwright-core).
 *
 *   bun scripts/screenshot.ts [out.png]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { chromium } from 'playwright-core'

const root = join(import.meta.dir, '..')
const out = process.argv[2] ?? join(root, 'docs', 'img', 'overview.png')
const operator = { email: 'operator@mmp.local', password: 'screenshot-operator-pass-31' }
const owner = { email: 'owner@duka.example', password: 'tembo-chai-mvua-2031' }
const offset = 3000 + Math.floor(Math.random() * 2000)
const gateway = `http://127.0.0.1:${9000 + offset}`
const dataDir = mkdtempSync(join(tmpdir(), 'mmp-screenshot-'))
const env = {
  ...process.env,
  MMP_DATA_DIR: dataDir,
  MMP_PORT_OFFSET: String(offset),
  MMP_OPERATOR_EMAIL: operator.email,
  MMP_OPERATOR_PASSWORD: operator.password,
  MMP_LOG_LEVEL: 'warn',
  MMP_WORKERS: '1',
}

async function until<T>(what: string, fn: () => Promise<T | null | false>, ms = 60_000) {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => null)
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(200)
  }
}

async function call(path: string, token: string | null, body?: unknown) {
  const res = await fetch(gateway + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as any
}

const server = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), 'serve'], {
  cwd: root,
  env,
  stdout: 'ignore',
  stderr: 'inherit',
})
try {
  await until('the platform', async () => (await fetch(`${gateway}/health`)).ok)
  const op = (await call('/api/v1/auth/login', null, operator)).access_token
  await call('/api/v1/tenants', op, {
    id: 'duka',
    name: 'Duka Moja',
    plan: 'pro',
    admin_email: owner.email,
    admin_password: owner.password,
  })
  const seed = Bun.spawnSync(
    [process.execPath, join(root, 'cmd/main.ts'), 'demo', 'seed', '--tenant', 'duka'].concat([
      '--days',
      '120',
      '--seed',
      '7',
      '--url',
      gateway,
    ]),
    { cwd: root, env, stderr: 'inherit' },
  )
  if (seed.exitCode !== 0) throw new Error('mmp demo seed failed')
  const written = Number(/(\d+) transactions written/.exec(seed.stdout.toString())?.[1])
  const token = (await call('/api/v1/auth/login', null, owner)).access_token
  // Events flow to analytics and cashflow a moment after the API answered.
  await until('the demo rows in analytics', async () => {
    const s = await call('/api/v1/analytics/summary', token)
    return s.total_transactions >= written
  })

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    await page.goto(`${gateway}/#/overview`)
    await page.getByLabel('Email').fill(owner.email)
    await page.getByLabel('Password').fill(owner.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.locator('#logout').waitFor()
    await page.locator('canvas').first().waitFor()
    await page.waitForLoadState('networkidle')
    mkdirSync(dirname(out), { recursive: true })
    // The figures and the chart, from the period picker down (the checklist above them is for a
    // new tenant's first days); the whole first screen when the page has no such heading.
    const summary = page.getByRole('heading', { name: 'Summary' }).first()
    const box = (await summary.count()) ? await summary.boundingBox() : null
    const top = Math.max(0, (box?.y ?? 0) - 90)
    await page.screenshot({
      path: out,
      fullPage: true,
      clip: { x: 0, y: top, width: 1280, height: 900 },
    })
    console.log(`wrote ${out}`)
  } finally {
    await browser.close()
  }
} finally {
  server.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
