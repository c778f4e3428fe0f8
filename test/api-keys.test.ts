import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { API_KEY_CACHE_MS } from '../services/kernel/tokens.ts'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { type SplitPlatform, startSplitPlatform } from './support/split.ts'
import { createTenants } from './support/tenants.ts'
import { budgetMs, referenceMs } from './support/timing.ts'

const root = join(import.meta.dir, '..')
const ownerOf = (tenant: string) =>
  [`owner@${tenant}.test`, `${tenant}-Owner-Passphrase-42`] as const

/**
 * Issue 18: secret API keys (`mmp_sk_…`) for servers. A tenant Admin makes one; it then works
 * like a token of its tenant and role on the gateway and on every service port, is rate-limited
 * as its tenant, manages no keys or users, and stops at once everywhere when revoked.
 */
describe('API keys end to end', () => {
  let p: TestPlatform
  let admin: string
  let slowAdmin: string
  let operator: string

  beforeAll(async () => {
    // Free tenants get 3 requests/s (a bucket of 6); the Pro tenant is effectively unlimited.
    p = await startTestPlatform({ env: { MMP_RATE_LIMIT_FREE: '3' } })
    operator = await p.login()
    await createTenants(p.gateway, operator, { id: 'keys-a', plan: 'pro' }, 'keys-slow')
    admin = await p.login(...ownerOf('keys-a'))
    slowAdmin = await p.login(...ownerOf('keys-slow'))
  }, 60_000)
  afterAll(() => p.dispose())

  const createKey = async (token: string, body: Record<string, unknown> = {}) => {
    const res = await api(p.gateway, token).post('/api/v1/auth/api-keys', {
      name: 'erp',
      role: 'Analyst',
      ...body,
    })
    expect(res.status).toBe(201)
    return res.body as { id: string; key: string; prefix: string }
  }
  /** The key's answer on the gateway and directly on a service port. */
  const statuses = async (key: string) => ({
    gateway: (await api(p.gateway, key).get('/api/v1/analytics/summary')).status,
    service: (await api(p.url('analytics'), key).get('/api/v1/analytics/transactions')).status,
  })

  it('works on the gateway and a service port like a token of its tenant and role', async () => {
    const made = await createKey(admin)
    expect(made.key).toMatch(/^mmp_sk_/)
    expect(await statuses(made.key)).toEqual({ gateway: 200, service: 200 })
    const me = await api(p.gateway, made.key).get('/api/v1/auth/me')
    expect(me.body).toEqual({ user_id: made.id, tenant_id: 'keys-a', role: 'Analyst' })
    // An Analyst key may not do a Manager's work, nor reach another tenant.
    const rule = await api(p.gateway, made.key).post('/api/v1/categorize/rules', {
      pattern: 'x',
      category: 'Food',
    })
    expect(rule.status).toBe(403)
    expect((await api(p.gateway, made.key).get('/api/v1/tenants/keys-slow')).status).toBe(403)
    const listed = await api(p.gateway, admin).get('/api/v1/auth/api-keys')
    const row = listed.body.data.find((k: { id: string }) => k.id === made.id)
    expect(row).toMatchObject({ prefix: made.prefix, role: 'Analyst', name: 'erp' })
    expect(typeof row.last_used_at).toBe('string')
    expect(JSON.stringify(listed.body)).not.toContain(made.key)
  })

  it('is rate-limited as its tenant: the key and the tenant’s users share one bucket', async () => {
    const made = await createKey(slowAdmin, { role: 'Viewer' })
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => api(p.gateway, made.key).get('/api/v1/analytics/summary')),
    )
    const limited = burst.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThan(0)
    expect(limited[0]!.headers.get('retry-after')).toBeTruthy()
    expect(burst.find((r) => r.status === 200)?.headers.get('ratelimit-limit')).toBe('6')
    // The tenant's own Admin finds the bucket spent by the key.
    expect((await api(p.gateway, slowAdmin).get('/api/v1/auth/me')).status).toBe(429)
  })

  it('cannot create keys or manage users, by any door (403)', async () => {
    const made = await createKey(admin, { role: 'Admin' })
    const asKey = api(p.gateway, made.key)
    const refused = {
      createKey: (await asKey.post('/api/v1/auth/api-keys', { name: 'x', role: 'Viewer' })).status,
      listKeys: (await asKey.get('/api/v1/auth/api-keys')).status,
      revokeKey: (await asKey.delete(`/api/v1/auth/api-keys/${made.id}`)).status,
      createUser: (
        await asKey.post('/api/v1/auth/users', {
          tenant_id: 'keys-a',
          email: 'new@keys-a.test',
          role: 'Admin',
        })
      ).status,
      listUsers: (await asKey.get('/api/v1/auth/users')).status,
      invite: (
        await asKey.post('/api/v1/tenants/keys-a/users', { email: 'n@keys-a.test', role: 'Admin' })
      ).status,
      tenantUsers: (await asKey.get('/api/v1/tenants/keys-a/users')).status,
      removeUser: (await asKey.delete('/api/v1/tenants/keys-a/users/usr_0')).status,
      direct: (
        await api(p.url('auth'), made.key).post('/api/v1/auth/api-keys', {
          name: 'x',
          role: 'Viewer',
        })
      ).status,
    }
    expect(Object.values(refused)).toEqual(Array(9).fill(403))
    // It is still an Admin for everything else (webhooks here).
    expect((await asKey.get('/api/v1/webhooks')).status).toBe(200)
  })

  it('answers 401 everywhere at once after revocation', async () => {
    const made = await createKey(admin)
    const other = await createKey(admin)
    expect(await statuses(made.key)).toEqual({ gateway: 200, service: 200 })
    const gone = await api(p.gateway, admin).delete(`/api/v1/auth/api-keys/${made.id}`)
    expect(gone.status).toBe(204)
    expect(await statuses(made.key)).toEqual({ gateway: 401, service: 401 })
    const problem = await api(p.gateway, made.key).get('/api/v1/auth/me')
    expect(problem.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
    expect(await statuses(other.key)).toEqual({ gateway: 200, service: 200 })
  })

  it("cannot lift the operator's feature switches, by the tenant's Admin key or Admin", async () => {
    await createTenants(p.gateway, operator, { id: 'keys-flags', plan: 'pro' })
    const owner = await p.login(...ownerOf('keys-flags'))
    const { key } = await createKey(owner, { role: 'Admin' })
    const path = '/api/v1/tenants/keys-flags/features'
    const off = await api(p.gateway, operator).put(path, { api_access: false, bulk_upload: false })
    expect(off.status).toBe(200)
    const change = { api_access: null, bulk_upload: true }
    // The key itself stops working with api_access off.
    const byKey = await api(p.gateway, key).put(path, change)
    expect(byKey.body).toMatchObject({
      status: 402,
      code: 'FEATURE_DISABLED',
      feature: 'api_access',
    })
    const byAdmin = await api(p.gateway, owner).put(path, change)
    expect(byAdmin.body).toMatchObject({ status: 402, feature: 'bulk_upload', held_by: 'operator' })
    const cleared = await api(p.gateway, owner).put(path, { api_access: null })
    expect(cleared.body.features).toMatchObject({ api_access: false, bulk_upload: false })
    const more = await api(p.gateway, owner).post('/api/v1/auth/api-keys', {
      name: 'x',
      role: 'Viewer',
    })
    expect(more.status).toBe(402)
  })

  it('is managed with mmp apikey create|list|revoke as the operator', async () => {
    const env = {
      ...process.env,
      MMP_PORT_OFFSET: String(p.offset),
      MMP_DATA_DIR: p.dataDir,
      MMP_OPERATOR_EMAIL: OPERATOR.email,
      MMP_OPERATOR_PASSWORD: OPERATOR.password,
    }
    const mmp = (...args: string[]) => {
      const out = Bun.spawnSync([process.execPath, join(root, 'cmd/main.ts'), 'apikey', ...args], {
        env,
        cwd: root,
      })
      return { code: out.exitCode, out: out.stdout.toString(), err: out.stderr.toString() }
    }
    const created = mmp(
      'create',
      'nightly export',
      '--tenant',
      'keys-a',
      '--role',
      'Viewer',
      '--json',
    )
    expect(created.code).toBe(0)
    const key = JSON.parse(created.out) as { id: string; key: string; role: string }
    expect(key).toMatchObject({ role: 'Viewer', name: 'nightly export', tenant_id: 'keys-a' })
    expect(await statuses(key.key)).toEqual({ gateway: 200, service: 200 })

    const listed = mmp('list', '--tenant', 'keys-a', '--json')
    expect(listed.code).toBe(0)
    const rows = JSON.parse(listed.out) as Array<{ id: string }>
    expect(rows.map((r) => r.id)).toContain(key.id)
    expect(listed.out).not.toContain(key.key)
    const text = mmp('list', '--tenant', 'keys-a')
    expect(text.out).toContain(`${key.id}  mmp_sk_`)

    expect(mmp('revoke', key.id, '--tenant', 'keys-slow').code).toBe(1)
    expect(await statuses(key.key)).toEqual({ gateway: 200, service: 200 })
    const revoked = mmp('revoke', key.id, '--tenant', 'keys-a')
    expect(revoked.code).toBe(0)
    expect(await statuses(key.key)).toEqual({ gateway: 401, service: 401 })
  }, 30_000)
})

describe('API keys in the Settings panel (Chromium)', () => {
  let p: TestPlatform
  let context: BrowserContext
  let profile: string

  beforeAll(async () => {
    p = await startTestPlatform()
    await createTenants(p.gateway, await p.login(), { id: 'keys-ui', plan: 'pro' })
    profile = mkdtempSync(join(tmpdir(), 'mmp-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      viewport: { width: 390, height: 844 },
    })
  }, 60_000)
  afterAll(async () => {
    await context?.close()
    rmSync(profile, { recursive: true, force: true })
    await p.dispose()
  })

  it('creates a key shown once with a copy button, lists it and revokes it', async () => {
    const page = await context.newPage()
    const origin = new URL(p.gateway).origin
    const [email, password] = ownerOf('keys-ui')
    await page.goto(`${origin}/#/overview`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.keyboard.press('Enter')
    await page.locator('#logout').waitFor()
    await page.goto(`${origin}/#/settings`)
    const form = page.locator('#api-key-form')
    await form.getByLabel('Name').fill('warehouse sync')
    await form.getByLabel('Role').selectOption('Viewer')
    await form.getByRole('button', { name: 'Create key' }).click()
    const key = (await page.locator('#api-key-secret').textContent()) ?? ''
    expect(key).toMatch(/^mmp_sk_[A-Za-z0-9_-]{43}$/)
    await page.locator('#copy-api-key').click()
    await page.locator('#copy-api-key', { hasText: /Copied|Selected/ }).waitFor()
    const row = page.locator('#api-keys-table tr', { hasText: 'warehouse sync' })
    await row.waitFor()
    expect(await row.textContent()).toContain(key.slice(0, 12))
    expect(await page.locator('#api-keys-table').textContent()).not.toContain(key)
    expect((await api(p.gateway, key).get('/api/v1/analytics/summary')).status).toBe(200)

    page.once('dialog', (d) => void d.accept())
    await row.getByRole('button', { name: 'Revoke API key warehouse sync' }).click()
    await page.locator('#api-keys', { hasText: 'No API keys yet.' }).waitFor()
    expect((await api(p.gateway, key).get('/api/v1/analytics/summary')).status).toBe(401)
    await page.close()
  }, 30_000)
})

/**
 * DESIGN §12: a key presented to a process without auth is asked of auth over HTTP and cached;
 * its revocation reaches that process on `mobilemoney.auth.revoked` and stops it at once.
 */
describe('API keys across processes', () => {
  let split: SplitPlatform
  let admin: string

  beforeAll(async () => {
    split = await startSplitPlatform()
    const operator = await split.front.login()
    await createTenants(split.front.gateway, operator, 'keys-split')
    admin = await split.front.login(...ownerOf('keys-split'))
  }, 90_000)
  afterAll(() => split.dispose())

  it('works on a process without auth and stops there within a second of revocation', async () => {
    const res = await api(split.front.gateway, admin).post('/api/v1/auth/api-keys', {
      name: 'split',
      role: 'Manager',
    })
    expect(res.status).toBe(201)
    const { id, key } = res.body as { id: string; key: string }
    const other = api(split.back.url('cashflow'), key)
    // The other process asks auth about the key no earlier than now and reuses that answer until
    // `expiresBy` at the earliest: a refusal before then can only have come with the revocation.
    const expiresBy = Date.now() + API_KEY_CACHE_MS
    expect((await other.get('/api/v1/cashflow/settings')).status).toBe(200)
    expect((await api(split.front.gateway, key).get('/api/v1/cashflow/daily')).status).toBe(200)
    // Cached now in the other process; the revocation must reach it over the broker.
    expect((await other.get('/api/v1/cashflow/settings')).status).toBe(200)

    // A second on an idle machine, or a few times a request to that process timed now on a busy one.
    const reference = await referenceMs(() => other.get('/api/v1/cashflow/settings'), 3)
    const budget = budgetMs({ floor: 1000, reference, factor: 20 })
    const gone = await api(split.front.gateway, admin).delete(`/api/v1/auth/api-keys/${id}`)
    expect(gone.status).toBe(204)
    await eventually(
      async () => (await other.get('/api/v1/cashflow/settings')).status === 401,
      budget,
      'the other process refuses the revoked key',
    )
    expect(Date.now()).toBeLessThan(expiresBy)
    expect((await api(split.front.gateway, key).get('/api/v1/cashflow/daily')).status).toBe(401)
  })

  it('refuses an unknown key on the process without auth', async () => {
    const forged = `mmp_sk_${'Q'.repeat(43)}`
    const res = await api(split.back.url('cashflow'), forged).get('/api/v1/cashflow/settings')
    expect(res).toMatchObject({ status: 401, body: { code: 'UNAUTHENTICATED' } })
  })
})
