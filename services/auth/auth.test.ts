import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { ServiceInstance } from '../kernel/context.ts'
import type { TestKit } from '../kernel/testing.ts'
import { authKit, OPERATOR } from './test-kit.ts'

describe('auth sessions', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await app.handle(
      new Request(`http://auth${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    )
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
  }
  const login = (password = OPERATOR.password, email = OPERATOR.email) =>
    post('/api/v1/auth/login', { email, password })

  beforeEach(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
  })
  afterEach(() => kit.cleanup())

  it('rotates a refresh token into a new session with the login body shape', async () => {
    const first = await login()
    expect(first.status).toBe(200)
    const next = await post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token })
    expect(next.status).toBe(200)
    expect(next.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      user: { email: OPERATOR.email, role: 'Admin', tenant_id: 'platform' },
    })
    expect(next.body.refresh_token).not.toBe(first.body.refresh_token)
    expect(next.body.access_token).not.toBe(first.body.access_token)
    const me = await app.handle(
      new Request('http://auth/api/v1/auth/me', {
        headers: { authorization: `Bearer ${next.body.access_token}` },
      }),
    )
    expect(await me.json()).toMatchObject({ tenant_id: 'platform', role: 'Admin' })
  })

  it('revokes the whole family when a rotated refresh token is used again', async () => {
    const first = await login()
    const second = await post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token })
    expect(second.status).toBe(200)
    const reuse = await post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token })
    expect(reuse.status).toBe(401)
    expect(reuse.body.code).toBe('UNAUTHENTICATED')
    const descendant = await post('/api/v1/auth/refresh', {
      refresh_token: second.body.refresh_token,
    })
    expect(descendant.status).toBe(401)
    const other = await login()
    expect(
      (await post('/api/v1/auth/refresh', { refresh_token: other.body.refresh_token })).status,
    ).toBe(200)
  })

  it('ends the session on logout with 204 and ignores unknown tokens', async () => {
    const s = await login()
    const out = await post('/api/v1/auth/logout', { refresh_token: s.body.refresh_token })
    expect(out.status).toBe(204)
    expect(
      (await post('/api/v1/auth/refresh', { refresh_token: s.body.refresh_token })).status,
    ).toBe(401)
    expect((await post('/api/v1/auth/logout', { refresh_token: 'x'.repeat(43) })).status).toBe(204)
  })

  it('ends every session of the bearer when logout names no refresh token', async () => {
    const a = await login()
    const b = await login()
    const anonymous = await app.handle(
      new Request('http://auth/api/v1/auth/logout', { method: 'POST' }),
    )
    expect(anonymous.status).toBe(401)
    const out = await app.handle(
      new Request('http://auth/api/v1/auth/logout', {
        method: 'POST',
        headers: { authorization: `Bearer ${a.body.access_token}` },
      }),
    )
    expect(out.status).toBe(204)
    for (const s of [a, b])
      expect(
        (await post('/api/v1/auth/refresh', { refresh_token: s.body.refresh_token })).status,
      ).toBe(401)
  })

  it('kills the access tokens of a removed user and a logged-out session, and publishes it', async () => {
    const operator = (await login()).body.access_token as string
    const me = async (token: string) =>
      (
        await app.handle(
          new Request('http://auth/api/v1/auth/me', {
            headers: { authorization: `Bearer ${token}` },
          }),
        )
      ).status
    const created = await post(
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'r@acme.test', role: 'Viewer', password: 'viewer-pass-1' },
      { authorization: `Bearer ${operator}` },
    )
    const viewer = (await login('viewer-pass-1', 'r@acme.test')).body.access_token as string
    expect(await me(viewer)).toBe(200)
    await app.handle(
      new Request(`http://auth/api/v1/auth/users/${created.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${operator}` },
      }),
    )
    expect(await me(viewer)).toBe(401)
    expect(await me(operator)).toBe(200)

    // Logout with a refresh token ends that session's access tokens, not the others.
    const a = await login()
    const b = await login()
    await post('/api/v1/auth/logout', { refresh_token: a.body.refresh_token })
    expect(await me(a.body.access_token)).toBe(401)
    expect(await me(b.body.access_token)).toBe(200)
    // A login right after a logout works even within the same second.
    await post('/api/v1/auth/logout', {}, { authorization: `Bearer ${b.body.access_token}` })
    expect(await me(b.body.access_token)).toBe(401)
    expect(await me(operator)).toBe(401)
    const again = await login()
    expect(await me(again.body.access_token)).toBe(200)

    await kit.ctx.relay.flush()
    const revoked = kit.bus.published.filter((e) => e.type === 'mobilemoney.auth.revoked')
    expect(revoked.map((e) => e.data.reason)).toEqual(['removed', 'logout', 'logout'])
    expect(revoked[0]).toMatchObject({
      tenant_id: 'acme',
      data: { user_id: created.body.id, session_id: null },
    })
    expect(typeof revoked[1]?.data.session_id).toBe('string')

    const list = await app.handle(
      new Request('http://auth/api/v1/auth/revocations', {
        headers: { authorization: `Bearer ${again.body.access_token}` },
      }),
    )
    expect(list.status).toBe(200)
    const body = await list.json()
    expect(body.keep_seconds).toBe(900)
    expect(body.data).toHaveLength(3)
    expect(body.data[0]).toMatchObject({ user_id: created.body.id, reason: 'removed' })
  })

  it('refuses an expired refresh token', async () => {
    const s = await login()
    kit.ctx.clock.advance(3601_000)
    expect(
      (await post('/api/v1/auth/refresh', { refresh_token: s.body.refresh_token })).status,
    ).toBe(401)
  })

  it('stops the refresh tokens of a removed user', async () => {
    const operator = (await login()).body.access_token as string
    const created = await post(
      '/api/v1/auth/users',
      { tenant_id: 'acme', email: 'a@acme.test', role: 'Viewer', password: 'viewer-pass-1' },
      { authorization: `Bearer ${operator}` },
    )
    expect(created.status).toBe(201)
    const session = await login('viewer-pass-1', 'a@acme.test')
    expect(session.status).toBe(200)
    const removed = await app.handle(
      new Request(`http://auth/api/v1/auth/users/${created.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${operator}` },
      }),
    )
    expect(removed.status).toBe(204)
    expect(
      (await post('/api/v1/auth/refresh', { refresh_token: session.body.refresh_token })).status,
    ).toBe(401)
  })

  it('answers 429 with Retry-After after five failures, and a success resets the count', async () => {
    for (let i = 0; i < 4; i++) expect((await login('wrong')).status).toBe(401)
    expect((await login()).status).toBe(200)
    for (let i = 0; i < 5; i++) expect((await login('wrong')).status).toBe(401)
    const locked = await login()
    expect(locked.status).toBe(429)
    expect(locked.body.code).toBe('RATE_LIMITED')
    const retry = Number(locked.headers.get('retry-after'))
    expect(retry).toBeGreaterThan(800)
    expect(retry).toBeLessThanOrEqual(900)
    expect((await login('any', 'other@mmp.test')).status).toBe(401)
    kit.ctx.clock.advance(901_000)
    expect((await login()).status).toBe(200)
  })

  it('validates refresh and logout bodies with 422', async () => {
    const res = await post('/api/v1/auth/refresh', {})
    expect(res.status).toBe(422)
    expect(res.body.errors[0].field).toBe('refresh_token')
  })
})
