import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { ServiceInstance } from '../kernel/context.ts'
import { writeEntitlements } from '../kernel/entitlements.ts'
import type { TestKit } from '../kernel/testing.ts'
import { authKit, OPERATOR } from './test-kit.ts'

describe('auth policies on every door', () => {
  let kit: TestKit
  let app: ServiceInstance['app']
  let operator: string

  const post = async (path: string, body: unknown, token?: string) => {
    const res = await app.handle(
      new Request(`http://auth${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      }),
    )
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const createUser = (email: string, password?: string, token = operator) =>
    post(
      '/api/v1/auth/users',
      { tenant_id: 'acme', email, role: 'Viewer', ...(password ? { password } : {}) },
      token,
    )

  beforeEach(async () => {
    const made = await authKit()
    kit = made.kit
    app = made.instance.app
    operator = (await post('/api/v1/auth/login', OPERATOR)).body.access_token
  })
  afterEach(() => kit.cleanup())

  for (const [password, why] of [
    ['12345678', /at least 10 characters/],
    ['short-1', /at least 10 characters/],
    ['1234567890', /common/],
    ['qwertyuiop', /common/],
    ['password1234', /too easy to guess/],
    ['Password123!', /too easy to guess/],
    ['aaaaaaaaaaaa', /too easy to guess/],
    ['ann.kamau@acme.test', /too easy to guess: it contains the email/],
  ] as const) {
    it(`refuses the password ${JSON.stringify(password)} on user create with 422 naming the field`, async () => {
      const res = await createUser('ann.kamau@acme.test', password)
      expect(res.status).toBe(422)
      expect(res.body.errors).toEqual([
        expect.objectContaining({ field: 'password', message: expect.stringMatching(why) }),
      ])
    })
  }

  it('accepts a long unguessable password', async () => {
    expect((await createUser('ann@acme.test', 'tembo-chai-mvua-2031')).status).toBe(201)
    expect(
      (
        await post('/api/v1/auth/login', {
          email: 'ann@acme.test',
          password: 'tembo-chai-mvua-2031',
        })
      ).status,
    ).toBe(200)
  })

  it('refuses a weak password on accept-invite and keeps the invitation usable', async () => {
    const invited = await createUser('bob@acme.test')
    expect(invited.status).toBe(201)
    const weak = await post('/api/v1/auth/accept-invite', {
      token: invited.body.invite_token,
      password: 'bobbobbob1',
    })
    expect(weak.status).toBe(422)
    expect(weak.body.errors[0]).toMatchObject({ field: 'password' })
    const tooShort = await post('/api/v1/auth/accept-invite', {
      token: invited.body.invite_token,
      password: 'abc',
    })
    expect(tooShort.status).toBe(422)
    expect(tooShort.body.errors[0]).toMatchObject({ field: 'password' })
    const strong = await post('/api/v1/auth/accept-invite', {
      token: invited.body.invite_token,
      password: 'correct-horse-battery',
    })
    expect(strong.status).toBe(200)
  })

  it('holds the plan user limit on POST /auth/users, invitations included, for the operator too', async () => {
    const boss = { email: 'boss@acme.test', password: 'tembo-chai-mvua-2031' }
    expect(
      (await post('/api/v1/auth/users', { ...boss, tenant_id: 'acme', role: 'Admin' }, operator))
        .status,
    ).toBe(201)
    const admin = (await post('/api/v1/auth/login', boss)).body.access_token
    const now = new Date().toISOString()
    writeEntitlements(kit.registry, 'acme', {
      plan: 'free',
      status: 'active',
      period_start: now,
      period_end: now,
      limits: { users: 3 },
      used: {},
      updated_at: now,
    })
    expect((await createUser('one@acme.test')).status).toBe(201)
    expect((await createUser('two@acme.test', 'tembo-chai-mvua-2031')).status).toBe(201)
    const third = await createUser('three@acme.test')
    expect(third.status).toBe(402)
    expect(third.body).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'users', max: 3, used: 3 })
    expect((await createUser('four@acme.test', undefined, admin)).status).toBe(402)
  })

  it('lets no concurrent creations overshoot the user limit', async () => {
    const now = new Date().toISOString()
    writeEntitlements(kit.registry, 'acme', {
      plan: 'free',
      status: 'active',
      period_start: now,
      period_end: now,
      limits: { users: 3 },
      used: {},
      updated_at: now,
    })
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => createUser(`u${i}@acme.test`, 'tembo-chai-mvua-2031')),
    )
    expect(results.filter((r) => r.status === 201)).toHaveLength(3)
    expect(results.filter((r) => r.status === 402)).toHaveLength(9)
  })
})
