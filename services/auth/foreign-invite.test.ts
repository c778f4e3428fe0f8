import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { ServiceInstance } from '../kernel/context.ts'
import type { TestKit } from '../kernel/testing.ts'
import { authKit, OPERATOR } from './test-kit.ts'

const STRONG = 'correct horse battery staple 42'

/** Issue: inviting an address that has an account in another tenant told its existence (409). */
describe('an invitation of an address with an account in another tenant', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  let adminA = ''
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
  const invite = (email: string) =>
    call('POST', '/api/v1/auth/users', { tenant_id: 'acme', email, role: 'Viewer' }, adminA)

  beforeAll(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
    kit.registry.setPlacement('beta', { isolation: 'shared' })
    const op = (await call('POST', '/api/v1/auth/login', OPERATOR)).body.access_token
    for (const [tenant_id, email] of [
      ['acme', 'admin@acme.test'],
      ['beta', 'viewer@beta.test'],
      ['beta', 'signer@beta.test'],
    ] as const) {
      const role = tenant_id === 'acme' ? 'Admin' : 'Viewer'
      const r = await call(
        'POST',
        '/api/v1/auth/users',
        { tenant_id, email, role, password: STRONG },
        op,
      )
      expect(r.status).toBe(201)
    }
    adminA = (
      await call('POST', '/api/v1/auth/login', { email: 'admin@acme.test', password: STRONG })
    ).body.access_token
  })
  afterAll(() => kit.cleanup())

  it('looks like any other invitation, and the invitation is listed like one', async () => {
    const fresh = await invite('nobody@elsewhere.test')
    const foreign = await invite('viewer@beta.test')
    expect(foreign.status).toBe(fresh.status)
    expect(foreign.status).toBe(201)
    expect(Object.keys(foreign.body).sort()).toEqual(Object.keys(fresh.body).sort())
    expect(foreign.body).toMatchObject({ status: 'invited', tenant_id: 'acme', role: 'Viewer' })
    const listed = await call('GET', '/api/v1/auth/users', undefined, adminA)
    expect(listed.body.data.map((u: { email: string }) => u.email)).toEqual(
      expect.arrayContaining(['nobody@elsewhere.test', 'viewer@beta.test']),
    )
  })

  it('still answers 409 for an address already in the inviting tenant', async () => {
    const again = await invite('admin@acme.test')
    expect(again.status).toBe(409)
  })

  it('leaves the other account signing in as before', async () => {
    const foreign = await invite('signer@beta.test')
    expect(foreign.status).toBe(201)
    const signedIn = await call('POST', '/api/v1/auth/login', {
      email: 'signer@beta.test',
      password: STRONG,
    })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.user).toMatchObject({ tenant_id: 'beta' })
    // A second invitation of it in acme is acme's own duplicate: 409, as for any address.
    expect((await invite('signer@beta.test')).status).toBe(409)
  })

  it('lets the invitee who has an account elsewhere know, not the inviter', async () => {
    const r = await invite('held@beta.test')
    expect(r.status).toBe(201)
    const op = (await call('POST', '/api/v1/auth/login', OPERATOR)).body.access_token
    const made = await call(
      'POST',
      '/api/v1/auth/users',
      { tenant_id: 'beta', email: 'held@beta.test', role: 'Viewer', password: STRONG },
      op,
    )
    expect(made.status).toBe(201)
    const accepted = await call('POST', '/api/v1/auth/accept-invite', {
      token: r.body.invite_token,
      password: STRONG,
    })
    expect(accepted.status).toBe(409)
    expect(accepted.body.detail).toContain('already has an account')
  })
})
