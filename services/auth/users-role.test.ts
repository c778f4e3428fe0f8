import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { ServiceInstance } from '../kernel/context.ts'
import type { TestKit } from '../kernel/testing.ts'
import { authKit, OPERATOR } from './test-kit.ts'

const STRONG = 'correct horse battery staple 42'

describe('invitations and roles', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await app.handle(
      new Request(`http://auth${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const operatorToken = async () =>
    (await call('POST', '/api/v1/auth/login', OPERATOR)).body.access_token as string

  beforeEach(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
  })
  afterEach(() => kit.cleanup())

  it('returns an invite_url to the dashboard accept page that the token in it redeems', async () => {
    const op = await operatorToken()
    const made = await call(
      'POST',
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'ann@acme.test', role: 'Analyst' },
      op,
    )
    expect(made.status).toBe(201)
    expect(made.body.invite_url).toBe(`http://mmp.test/#/accept?token=${made.body.invite_token}`)
    const token = new URL(made.body.invite_url.replace('#/accept', 'accept')).searchParams.get(
      'token',
    )
    const weak = await call('POST', '/api/v1/auth/accept-invite', { token, password: 'password1' })
    expect(weak.status).toBe(422)
    const ok = await call('POST', '/api/v1/auth/accept-invite', { token, password: STRONG })
    expect(ok.status).toBe(200)
    expect(ok.body.user).toMatchObject({ email: 'ann@acme.test', role: 'Analyst' })
  })

  it("changes a user's role, ends their tokens, and the refreshed session has the new role", async () => {
    const op = await operatorToken()
    const made = await call(
      'POST',
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'bo@acme.test', role: 'Viewer', password: STRONG },
      op,
    )
    const session = (
      await call('POST', '/api/v1/auth/login', { email: 'bo@acme.test', password: STRONG })
    ).body
    const changed = await call(
      'PATCH',
      `/api/v1/auth/users/${made.body.id}`,
      { role: 'Manager' },
      op,
    )
    expect(changed).toMatchObject({ status: 200, body: { id: made.body.id, role: 'Manager' } })
    expect((await call('GET', '/api/v1/auth/me', undefined, session.access_token)).status).toBe(401)
    const next = await call('POST', '/api/v1/auth/refresh', {
      refresh_token: session.refresh_token,
    })
    expect(next.body.user.role).toBe('Manager')
  })

  it('refuses a role change by a non-Admin, of oneself, an unknown role and another tenant', async () => {
    const op = await operatorToken()
    const admin = await call(
      'POST',
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'ad@acme.test', role: 'Admin', password: STRONG },
      op,
    )
    const adminToken = (
      await call('POST', '/api/v1/auth/login', { email: 'ad@acme.test', password: STRONG })
    ).body.access_token
    const self = await call(
      'PATCH',
      `/api/v1/auth/users/${admin.body.id}`,
      { role: 'Viewer' },
      adminToken,
    )
    expect(self.status).toBe(409)
    const bad = await call('PATCH', `/api/v1/auth/users/${admin.body.id}`, { role: 'Owner' }, op)
    expect(bad.status).toBe(422)
    const me = (await call('GET', '/api/v1/auth/me', undefined, op)).body
    const foreign = await call(
      'PATCH',
      `/api/v1/auth/users/${me.user_id ?? me.id}`,
      { role: 'Viewer' },
      adminToken,
    )
    expect(foreign.status).toBe(404)
    await call(
      'POST',
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'vi@acme.test', role: 'Viewer', password: STRONG },
      op,
    )
    const viewer = (
      await call('POST', '/api/v1/auth/login', { email: 'vi@acme.test', password: STRONG })
    ).body.access_token
    const denied = await call(
      'PATCH',
      `/api/v1/auth/users/${admin.body.id}`,
      { role: 'Viewer' },
      viewer,
    )
    expect(denied.status).toBe(403)
  })
})
