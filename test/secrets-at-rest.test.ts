/**
 * Secrets shown once stay out of the data dir and its backups: every route that answers with a
 * secret (an API key, a webhook signing secret, an invitation token or link, access and refresh
 * tokens) is called, the creates twice with one `Idempotency-Key`, and then every file of the data
 * dir and of a backup is searched for each secret's bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { routes } from '../schema/routes.ts'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

const root = join(import.meta.dir, '..')
const PASSWORD = 'Rest-Secrets-Passphrase-81'

/** The files under a directory that hold any of the needles, with the needle's label. */
function holders(dir: string, needles: Map<string, string>): string[] {
  const found: string[] = []
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue
    const path = join(e.parentPath, e.name)
    // The simulator plays Safaricom, which keeps a till's registered URLs in order to call them.
    if (path.slice(dir.length).split(/[\\/]/).includes('simulator')) continue
    const bytes = readFileSync(path)
    for (const [needle, label] of needles)
      if (bytes.includes(needle)) found.push(`${path.slice(dir.length)}: ${label}`)
  }
  return found
}

describe('secrets shown once are kept nowhere in clear', () => {
  let p: TestPlatform
  let operator: string
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-secrets-'))

  beforeAll(async () => {
    p = await startTestPlatform({ env: { MMP_RATE_LIMIT_IP: '100000' } })
    operator = await p.login()
  }, 60_000)
  afterAll(async () => {
    await p?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  /** Every secret an answer carried, by what it is (each route once per run, in any test order). */
  let issued: Promise<Map<string, string>> | undefined
  const issueEverySecret = () => {
    issued ??= issue()
    return issued
  }
  const issue = async () => {
    const secrets = new Map<string, string>()
    const keep = (label: string, value: unknown) => {
      expect(typeof value).toBe('string')
      secrets.set(value as string, label)
      // A `whsec_` secret is base64 after its prefix; an invite link carries its token.
      if ((value as string).startsWith('whsec_')) secrets.set((value as string).slice(6), label)
    }
    /** A create sent twice with one key: the first answer carries the secret, the replay not. */
    const twice = async (label: string, token: string, path: string, body: unknown) => {
      const key = { 'idempotency-key': `rest-${label}` }
      const first = await api(p.gateway, token).post(path, body, key)
      expect(first.status).toBe(201)
      const again = await api(p.gateway, token).post(path, body, key)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      const fields = routes.find((r) => r.method === 'POST' && r.path === routeOf(path))!.shownOnce
      expect(fields.length).toBeGreaterThan(0)
      for (const f of fields) {
        if (first.body[f] !== undefined) keep(`${label} ${f}`, first.body[f])
        expect(again.body[f]).toBeUndefined()
      }
      expect(again.body.shown_once).toContain('shown once')
      return first.body
    }
    const routeOf = (path: string) => path.replace('/rest-a/', '/:tenant_id/')

    const tenant = await twice('tenant', operator, '/api/v1/tenants', {
      id: 'rest-a',
      name: 'Rest A',
      admin_email: 'owner@rest-a.test',
    })
    const accepted = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token: tenant.invite_token,
      password: PASSWORD,
    })
    expect(accepted.status).toBe(200)
    keep('accept-invite access_token', accepted.body.access_token)
    keep('accept-invite refresh_token', accepted.body.refresh_token)
    const login = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'owner@rest-a.test',
      password: PASSWORD,
    })
    keep('login access_token', login.body.access_token)
    keep('login refresh_token', login.body.refresh_token)
    const admin = login.body.access_token as string
    const refreshed = await api(p.gateway).post('/api/v1/auth/refresh', {
      refresh_token: login.body.refresh_token,
    })
    expect(refreshed.status).toBe(200)
    keep('refresh access_token', refreshed.body.access_token)
    keep('refresh refresh_token', refreshed.body.refresh_token)

    await twice('tenant-invite', admin, '/api/v1/tenants/rest-a/users', {
      email: 'viewer@rest-a.test',
      role: 'Viewer',
    })
    await twice('auth-invite', admin, '/api/v1/auth/users', {
      tenant_id: 'rest-a',
      email: 'analyst@rest-a.test',
      role: 'Analyst',
    })
    await api(p.gateway, operator).put('/api/v1/tenants/rest-a/upgrade', { plan: 'pro' })
    await twice('api-key', admin, '/api/v1/auth/api-keys', { name: 'server', role: 'Viewer' })
    const hook = await twice('webhook', admin, '/api/v1/webhooks', {
      url: 'https://hooks.example.com/rest',
      events: ['payment.success'],
    })
    // A till's confirmation and validation URLs carry its tokens (the `sig` parameter).
    const till = await twice('c2b', admin, '/api/v1/payments/c2b/register', {
      shortcode: '600931',
      response_type: 'Completed',
    })
    for (const f of ['confirmation_url', 'validation_url'])
      keep(`c2b ${f} token`, new URL(till[f]).searchParams.get('sig'))
    const rotated = await api(p.gateway, admin).post(`/api/v1/webhooks/${hook.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    keep('rotated webhook secret', rotated.body.secret)
    return secrets
  }

  it('answers every secret-returning route, and replays each create without its secret', async () => {
    const secrets = await issueEverySecret()
    expect(secrets.size).toBeGreaterThanOrEqual(14)
  })

  it('keeps none of them in any file of the data dir', async () => {
    const secrets = await issueEverySecret()
    expect(holders(p.dataDir, secrets)).toEqual([])
  })

  it('keeps none of them in any file of a backup', async () => {
    const secrets = await issueEverySecret()
    const to = join(scratch, `backup-${Date.now()}`)
    const r = Bun.spawnSync([process.execPath, join(root, 'cmd/main.ts'), 'backup', '--to', to], {
      cwd: root,
      env: { ...process.env, MMP_DATA_DIR: p.dataDir, MMP_PORT_OFFSET: String(p.offset) },
    })
    expect(r.exitCode).toBe(0)
    expect(readdirSync(to).length).toBeGreaterThan(0)
    expect(holders(to, secrets)).toEqual([])
  }, 60_000)
})
