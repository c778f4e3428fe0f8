import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

describe('auth users and invitations', () => {
  let p: TestPlatform
  let operator: string
  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,broker' })
    operator = await p.login()
    await createTenants(p.gateway, operator, 'acme', 'beta')
  })
  afterAll(() => p.dispose())

  it('creates an invited user whose invitation works once', async () => {
    const created = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'acme',
      email: 'Ann@Acme.test',
      role: 'Manager',
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      tenant_id: 'acme',
      email: 'ann@acme.test',
      role: 'Manager',
      status: 'invited',
    })
    const token = created.body.invite_token as string
    const accepted = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token,
      password: 'ann-password-1',
    })
    expect(accepted.status).toBe(200)
    expect(accepted.body.user).toMatchObject({
      email: 'ann@acme.test',
      role: 'Manager',
      tenant_id: 'acme',
    })
    const again = await api(p.gateway).post('/api/v1/auth/accept-invite', {
      token,
      password: 'other-password',
    })
    expect(again.status).toBe(401)
    const session = await p.login('ann@acme.test', 'ann-password-1')
    expect(session.length).toBeGreaterThan(20)
  })

  it('lets a tenant Admin manage only its own tenant and refuses duplicates', async () => {
    await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'beta',
      email: 'boss@beta.test',
      role: 'Admin',
      password: 'boss-password-1',
    })
    const admin = await p.login('boss@beta.test', 'boss-password-1')
    const own = await api(p.gateway, admin).post('/api/v1/auth/users', {
      tenant_id: 'beta',
      email: 'v@beta.test',
      role: 'Viewer',
      password: 'viewer-pass-1',
    })
    expect(own.status).toBe(201)
    const other = await api(p.gateway, admin).post('/api/v1/auth/users', {
      tenant_id: 'acme',
      email: 'x@beta.test',
      role: 'Viewer',
    })
    expect(other.status).toBe(403)
    const dup = await api(p.gateway, admin).post('/api/v1/auth/users', {
      tenant_id: 'beta',
      email: 'V@beta.test',
      role: 'Viewer',
    })
    expect(dup.status).toBe(409)
    const list = await api(p.gateway, admin).get('/api/v1/auth/users')
    expect(list.body.data.map((u: { email: string }) => u.email).sort()).toEqual([
      'boss@beta.test',
      'owner@beta.test',
      'v@beta.test',
    ])
    const viewer = await p.login('v@beta.test', 'viewer-pass-1')
    expect((await api(p.gateway, viewer).get('/api/v1/auth/users')).status).toBe(403)
    const removed = await api(p.gateway, admin).delete(`/api/v1/auth/users/${own.body.id}`)
    expect(removed.status).toBe(204)
    expect(
      (
        await api(p.gateway).post('/api/v1/auth/login', {
          email: 'v@beta.test',
          password: 'viewer-pass-1',
        })
      ).status,
    ).toBe(401)
  })
})
