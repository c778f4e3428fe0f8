import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { api } from '../../test/support/client.ts'
import type { ServiceInstance } from '../kernel/context.ts'
import { PURPOSE_HEADER } from '../kernel/entitlements.ts'
import type { TestKit } from '../kernel/testing.ts'
import { API_KEY_LOOKUP } from '../kernel/tokens.ts'
import { hashToken } from './issue.ts'
import { authKit, OPERATOR } from './test-kit.ts'

describe('API keys', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  let operator: string
  let admin: string

  const call = (
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => api(app, token ?? undefined, headers).request(method, path, body)
  const login = async (email: string, password: string) =>
    (await call('POST', '/api/v1/auth/login', null, { email, password })).body
      .access_token as string
  const createKey = (token: string, body: Record<string, unknown> = {}) =>
    call('POST', '/api/v1/auth/api-keys', token, { name: 'server', role: 'Analyst', ...body })
  const me = (token: string) => call('GET', '/api/v1/auth/me', token)

  beforeEach(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
    operator = await login(OPERATOR.email, OPERATOR.password)
    const created = await call('POST', '/api/v1/auth/users', operator, {
      tenant_id: 'acme',
      email: 'admin@acme.test',
      role: 'Admin',
      password: 'acme-admin-passphrase-9',
    })
    expect(created.status).toBe(201)
    admin = await login('admin@acme.test', 'acme-admin-passphrase-9')
  })
  afterEach(() => kit.cleanup())

  it('creates a key shown once, acting as its tenant and role', async () => {
    const made = await createKey(admin, { name: 'ERP sync' })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({
      name: 'ERP sync',
      role: 'Analyst',
      tenant_id: 'acme',
      expires_at: null,
      last_used_at: null,
    })
    expect(made.body.id).toMatch(/^key_[0-9a-f]{32}$/)
    expect(made.body.key).toMatch(/^mmp_sk_[A-Za-z0-9_-]{43}$/)
    expect(made.body.key.startsWith(made.body.prefix)).toBe(true)
    expect(made.body.prefix).toHaveLength(12)
    const who = await me(made.body.key)
    expect(who).toMatchObject({
      status: 200,
      body: { user_id: made.body.id, tenant_id: 'acme', role: 'Analyst' },
    })
  })

  it('stores only the hash: neither the table nor the database files hold the key', async () => {
    const made = await createKey(admin)
    const db = kit.registry.platform('auth')
    const rows = db.sqlite.query('SELECT * FROM api_keys').all() as Record<string, unknown>[]
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ key_hash: hashToken(made.body.key), prefix: made.body.prefix })
    expect(JSON.stringify(rows)).not.toContain(made.body.key)
    const dir = join(kit.dataDir, 'platform')
    for (const file of readdirSync(dir).filter((f) => f.startsWith('auth.db')))
      expect(readFileSync(join(dir, file)).includes(made.body.key)).toBe(false)
  })

  it('lists live keys with last_used_at, never the key, written at most once a minute', async () => {
    const made = await createKey(admin)
    const list = await call('GET', '/api/v1/auth/api-keys', admin)
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: made.body.id, last_used_at: null }),
    ])
    expect(JSON.stringify(list.body)).not.toContain(made.body.key)
    expect(list.body.data[0].key).toBeUndefined()

    await me(made.body.key)
    const used = (await call('GET', '/api/v1/auth/api-keys', admin)).body.data[0].last_used_at
    expect(typeof used).toBe('string')
    // Past the verifier's 30 s cache auth is asked again, but the minute has not passed.
    kit.ctx.clock.advance(31_000)
    await me(made.body.key)
    expect((await call('GET', '/api/v1/auth/api-keys', admin)).body.data[0].last_used_at).toBe(used)
    kit.ctx.clock.advance(31_000)
    await me(made.body.key)
    const later = (await call('GET', '/api/v1/auth/api-keys', admin)).body.data[0].last_used_at
    expect(Date.parse(later)).toBeGreaterThan(Date.parse(used))
  })

  it('revokes a cached key at once, publishes the revocation and forgets it in lists', async () => {
    const made = await createKey(admin)
    expect((await me(made.body.key)).status).toBe(200)
    const gone = await call('DELETE', `/api/v1/auth/api-keys/${made.body.id}`, admin)
    expect(gone.status).toBe(204)
    expect(await me(made.body.key)).toMatchObject({
      status: 401,
      body: { code: 'UNAUTHENTICATED' },
    })
    expect((await call('GET', '/api/v1/auth/api-keys', admin)).body.data).toEqual([])
    expect((await call('DELETE', `/api/v1/auth/api-keys/${made.body.id}`, admin)).status).toBe(404)
    await kit.ctx.relay.flush()
    const revoked = kit.bus.published.filter((e) => e.type === 'mobilemoney.auth.revoked')
    expect(revoked).toEqual([
      expect.objectContaining({
        tenant_id: 'acme',
        data: expect.objectContaining({
          api_key_id: made.body.id,
          user_id: made.body.id,
          reason: 'api_key_revoked',
        }),
      }),
    ])
  })

  it("answers 404 for another tenant's key and lets the operator manage any tenant's", async () => {
    const made = await createKey(operator, { tenant_id: 'acme', role: 'Viewer' })
    expect(made).toMatchObject({ status: 201, body: { tenant_id: 'acme', role: 'Viewer' } })
    kit.createTenant('beta')
    const beta = await createKey(operator, { tenant_id: 'beta' })
    expect((await call('DELETE', `/api/v1/auth/api-keys/${beta.body.id}`, admin)).status).toBe(404)
    expect((await createKey(admin, { tenant_id: 'beta' })).status).toBe(403)
    const listed = await call('GET', '/api/v1/auth/api-keys?tenant_id=beta', operator)
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([beta.body.id])
    expect((await createKey(operator, { tenant_id: 'platform' })).status).toBe(403)
  })

  it("revokes a tenant's keys when its users are removed for erasure", async () => {
    const made = await createKey(admin)
    expect((await me(made.body.key)).status).toBe(200)
    const erased = await call('DELETE', '/api/v1/auth/tenants/acme/users', operator)
    expect(erased.status).toBe(200)
    expect((await me(made.body.key)).status).toBe(401)
    expect((await call('GET', '/api/v1/auth/api-keys?tenant_id=acme', operator)).body.data).toEqual(
      [],
    )
  })

  it('refuses keys the management of keys and users (403)', async () => {
    const key = (await createKey(admin, { role: 'Admin' })).body.key as string
    const refused = [
      await createKey(key),
      await call('GET', '/api/v1/auth/api-keys', key),
      await call('DELETE', '/api/v1/auth/api-keys/key_0', key),
      await call('POST', '/api/v1/auth/users', key, {
        tenant_id: 'acme',
        email: 'x@acme.test',
        role: 'Admin',
      }),
      await call('GET', '/api/v1/auth/users', key),
      await call('DELETE', '/api/v1/auth/users/usr_0', key),
      await call('POST', '/api/v1/auth/logout', key, {}),
    ]
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403])
    // The key's ordinary Admin reads still work.
    expect((await me(key)).status).toBe(200)
  })

  it('holds the role matrix: a Viewer may not create keys', async () => {
    await call('POST', '/api/v1/auth/users', admin, {
      tenant_id: 'acme',
      email: 'v@acme.test',
      role: 'Viewer',
      password: 'acme-viewer-passphrase-9',
    })
    const viewer = await login('v@acme.test', 'acme-viewer-passphrase-9')
    expect((await createKey(viewer)).status).toBe(403)
  })

  it('refuses an expiry in the past and a key once its expiry passed', async () => {
    const past = await createKey(admin, { expires_at: '2020-01-01T00:00:00Z' })
    expect(past).toMatchObject({ status: 422, body: { code: 'VALIDATION_FAILED' } })
    const at = new Date(kit.ctx.clock.nowMs() + 60_000).toISOString()
    const made = await createKey(admin, { expires_at: at })
    expect(made.body.expires_at).toBe(at)
    expect((await me(made.body.key)).status).toBe(200)
    kit.ctx.clock.advance(60_000)
    expect((await me(made.body.key)).status).toBe(401)
  })

  it('answers 402 FEATURE_DISABLED to making or using keys without the plan’s api_access', async () => {
    const made = await createKey(admin)
    kit.registry.setPlacement('acme', { isolation: 'shared', features: { api_access: false } })
    expect(await createKey(admin)).toMatchObject({
      status: 402,
      body: { code: 'FEATURE_DISABLED' },
    })
    expect(await me(made.body.key)).toMatchObject({
      status: 402,
      body: { code: 'FEATURE_DISABLED' },
    })
  })

  it('describes a presented key only to a hop-signed platform lookup', async () => {
    const made = await createKey(admin)
    const path = '/api/v1/auth/api-keys/current'
    expect((await call('GET', path, null)).status).toBe(401)
    expect((await call('GET', path, made.body.key)).status).toBe(403)
    const forged = { [PURPOSE_HEADER]: API_KEY_LOOKUP }
    expect((await call('GET', path, made.body.key, undefined, forged)).status).toBe(403)
    const signed = (key: string) => {
      const h = new Headers({ authorization: `Bearer ${key}`, [PURPOSE_HEADER]: API_KEY_LOOKUP })
      kit.ctx.hop!.sign(h)
      return Object.fromEntries(h)
    }
    expect(await call('GET', path, null, undefined, signed(made.body.key))).toMatchObject({
      status: 200,
      body: { id: made.body.id, tenant_id: 'acme', role: 'Analyst', expires_at: null },
    })
    const unknown = `mmp_sk_${'z'.repeat(43)}`
    expect((await call('GET', path, null, undefined, signed(unknown))).status).toBe(401)
  })
})
