import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AppError } from '../services/kernel/errors.ts'
import {
  createServiceClient,
  type ServiceClient,
  staticDiscovery,
} from '../services/kernel/http-client.ts'
import { fakeClient } from '../services/tenant/fake-client.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { signToken } from './support/tokens.ts'

/**
 * services/tenant/fake-client.ts stands in for auth and billing in the tenant service's unit
 * tests. These are its contract tests: the calls the tenant service makes (services/tenant/users.ts,
 * plan.ts, upgrade.ts), made once to the fake and once to the real auth and billing routes through the kernel
 * client the tenant service uses, must come back the same shape with the same meaning. A real
 * route that renames, retypes or drops a field the fake answers with fails here, not in
 * production.
 */
describe('the tenant service’s fake auth and billing keep the real contract', () => {
  let p: TestPlatform
  let real: ServiceClient
  let operator: string
  let admin: string
  const TENANT = 'contract-co'
  const plan = {
    id: 'contract-starter',
    name: 'Contract Starter',
    price: 500,
    limits: { transactions: 2000, statements: 10, users: 3, webhook_endpoints: 1 },
    features: { advanced_analytics: true, bulk_upload: false, api_access: true },
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,billing,webhook,broker' })
    operator = await p.login()
    const gw = api(p.gateway, operator)
    const created = await gw.post('/api/v1/tenants', {
      id: TENANT,
      name: 'Contract Co',
      admin_email: 'owner@contract.test',
    })
    expect(created.status).toBe(201)
    expect((await gw.post('/api/v1/billing/plans', plan)).status).toBe(201)
    admin = await signToken(p.dataDir, { tenantId: TENANT, role: 'Admin' })
    // The subscription billing's usage answers from is made from tenants.changed.
    await eventually(
      async () => (await gw.get(`/api/v1/billing/subscriptions/${TENANT}`)).status === 200,
      10_000,
      'the subscription from tenants.changed',
    )
    real = createServiceClient(
      staticDiscovery({ auth: [p.url('auth')], billing: [p.url('billing')] }),
    )
  }, 60_000)
  afterAll(() => p?.dispose())

  /** What a call answered, or the code it failed with: the same for the fake and the real. */
  const outcome = async <T>(run: () => Promise<T>): Promise<{ ok: T } | { code: string }> => {
    try {
      return { ok: await run() }
    } catch (err) {
      if (err instanceof AppError) return { code: err.code }
      throw err
    }
  }

  /** The calls of services/tenant/users.ts and plan.ts, in the order the tenant routes make them. */
  const exchange = async (client: ServiceClient, run: string) => {
    const email = (who: string) => `${who}-${run}@contract.test`
    const invited = await outcome(() =>
      client.call<Record<string, unknown>>('auth', '/api/v1/auth/users', {
        method: 'POST',
        token: admin,
        body: { tenant_id: TENANT, email: email('ann'), role: 'Analyst' },
      }),
    )
    const withPassword = await outcome(() =>
      client.call<Record<string, unknown>>('auth', '/api/v1/auth/users', {
        method: 'POST',
        token: admin,
        body: {
          tenant_id: TENANT,
          email: email('bob'),
          role: 'Viewer',
          password: 'contract-password-1',
        },
      }),
    )
    const duplicate = await outcome(() =>
      client.call('auth', '/api/v1/auth/users', {
        method: 'POST',
        token: admin,
        body: { tenant_id: TENANT, email: email('ann'), role: 'Viewer' },
      }),
    )
    const listed = await outcome(() =>
      client.call<{ data: Array<Record<string, unknown>> }>('auth', '/api/v1/auth/users', {
        token: admin,
        query: { tenant_id: TENANT },
      }),
    )
    const annId = 'ok' in invited ? String(invited.ok.id) : ''
    const removed = await outcome(() =>
      client.call('auth', `/api/v1/auth/users/${encodeURIComponent(annId)}`, {
        method: 'DELETE',
        token: admin,
      }),
    )
    const after = await outcome(() =>
      client.call<{ data: Array<Record<string, unknown>> }>('auth', '/api/v1/auth/users', {
        token: admin,
        query: { tenant_id: TENANT },
      }),
    )
    const plans = await outcome(() =>
      client.call<{ data: Array<Record<string, unknown>> }>('billing', '/api/v1/billing/plans', {
        token: admin,
      }),
    )
    const usage = await outcome(() =>
      client.call<Record<string, unknown>>('billing', `/api/v1/billing/usage/${TENANT}`, {
        token: admin,
      }),
    )
    // services/tenant/upgrade.ts: the tenant's upgrade door goes through billing's.
    const upgraded = await outcome(() =>
      client.call<Record<string, unknown>>('billing', '/api/v1/billing/subscriptions/upgrade', {
        method: 'POST',
        token: admin,
        body: { tenant_id: TENANT, plan: plan.id },
      }),
    )
    const unknownPlan = await outcome(() =>
      client.call('billing', '/api/v1/billing/subscriptions/upgrade', {
        method: 'POST',
        token: admin,
        body: { tenant_id: TENANT, plan: 'no-such-plan' },
      }),
    )
    return {
      email,
      invited,
      withPassword,
      duplicate,
      listed,
      removed,
      after,
      plans,
      usage,
      upgraded,
      unknownPlan,
    }
  }

  let fake: Awaited<ReturnType<typeof exchange>>
  let live: Awaited<ReturnType<typeof exchange>>
  beforeAll(async () => {
    const f = fakeClient()
    f.plans.push({
      id: plan.id,
      tier: 'pro',
      price: plan.price,
      limits: { users: plan.limits.users },
      features: plan.features,
    })
    fake = await exchange(f, 'fake')
    live = await exchange(real, 'real')
  })

  it('creates an invited user with a single-use token, and an active one when given a password', () => {
    for (const side of [fake, live]) {
      expect(side.invited).toMatchObject({
        ok: {
          tenant_id: TENANT,
          email: side.email('ann'),
          role: 'Analyst',
          status: 'invited',
          invite_token: expect.any(String),
          expires_at: expect.any(String),
        },
      })
      expect(side.withPassword).toMatchObject({
        ok: { tenant_id: TENANT, email: side.email('bob'), role: 'Viewer', status: 'active' },
      })
      expect('ok' in side.withPassword && side.withPassword.ok).not.toHaveProperty('invite_token')
    }
    expectSameShape(ok(fake.invited), ok(live.invited), 'POST /api/v1/auth/users (invite)')
    expectSameShape(ok(fake.withPassword), ok(live.withPassword), 'POST /api/v1/auth/users')
  })

  it('refuses a second user with the same email with the same error code', () => {
    expect(fake.duplicate).toEqual(live.duplicate)
    expect(live.duplicate).toEqual({ code: 'CONFLICT' })
  })

  it("lists the tenant's users only, and forgets a removed one", () => {
    for (const side of [fake, live]) {
      const emails = (r: typeof side.listed) =>
        ok(r).data.map((u: Record<string, unknown>) => u.email as string)
      expect(
        ok(side.listed).data.every((u: { tenant_id?: unknown }) => u.tenant_id === TENANT),
      ).toBe(true)
      expect(emails(side.listed)).toEqual(
        expect.arrayContaining([side.email('ann'), side.email('bob')]),
      )
      expect('ok' in side.removed).toBe(true)
      expect(emails(side.after)).not.toContain(side.email('ann'))
      expect(emails(side.after)).toContain(side.email('bob'))
    }
    expectSameShape(ok(fake.listed), ok(live.listed), 'GET /api/v1/auth/users')
  })

  it('lists billing plans with the tier, price, user limit and features the tenant service reads', () => {
    const pick = (side: typeof fake) =>
      ok(side.plans).data.find((x: { id?: unknown }) => x.id === plan.id)
    expect(pick(live)).toMatchObject(pick(fake) ?? { missing: true })
    expectSameShape(ok(fake.plans), ok(live.plans), 'GET /api/v1/billing/plans')
  })

  it("answers a tenant's usage with its period and metered limits", () => {
    expectSameShape(ok(fake.usage), ok(live.usage), 'GET /api/v1/billing/usage/:tenant_id')
  })

  it("changes the plan through billing's door and answers with the plan's terms and revision", () => {
    for (const side of [fake, live]) {
      expect(side.upgraded).toMatchObject({
        ok: {
          tenant_id: TENANT,
          plan: plan.id,
          plan_revision: 2,
          plan_terms: { tier: 'pro', features: plan.features, users: plan.limits.users },
        },
      })
    }
    expectSameShape(
      ok(fake.upgraded),
      ok(live.upgraded),
      'POST /api/v1/billing/subscriptions/upgrade',
    )
    expect(fake.unknownPlan).toEqual(live.unknownPlan)
    expect(live.unknownPlan).toEqual({ code: 'VALIDATION_FAILED' })
  })

  it('removes every user of an erased tenant and says how many', async () => {
    const count = async (client: ServiceClient) =>
      client.call<{ removed?: unknown }>('auth', `/api/v1/auth/tenants/${TENANT}/users`, {
        method: 'DELETE',
        token: operator,
      })
    const f = fakeClient()
    await f.call('auth', '/api/v1/auth/users', {
      method: 'POST',
      token: operator,
      body: { tenant_id: TENANT, email: 'x@contract.test', role: 'Admin' },
    })
    const fromFake = await count(f)
    const fromReal = await count(real)
    expect(fromFake).toEqual({ removed: 1 })
    // The real tenant had its owner and bob left.
    expect(fromReal).toEqual({ removed: 2 })
  })
})

function ok<T>(r: { ok: T } | { code: string }): T {
  if (!('ok' in r)) throw new Error(`the call failed with ${r.code}`)
  return r.ok
}

/**
 * Every field the fake answers with is in the real answer with the same JSON type (arrays by
 * their first element); the real one may say more. The message names the path that differs.
 */
function expectSameShape(fake: unknown, real: unknown, route: string, path = '$'): void {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
  if (kind(fake) !== kind(real))
    throw new Error(`${route}: ${path} is ${kind(fake)} in the fake but ${kind(real)} for real`)
  if (Array.isArray(fake) && Array.isArray(real)) {
    if (fake.length > 0 && real.length > 0) expectSameShape(fake[0], real[0], route, `${path}[0]`)
    return
  }
  if (kind(fake) === 'object') {
    const r = real as Record<string, unknown>
    for (const [key, value] of Object.entries(fake as Record<string, unknown>)) {
      if (!(key in r)) throw new Error(`${route}: the real answer has no ${path}.${key}`)
      expectSameShape(value, r[key], route, `${path}.${key}`)
    }
  }
}
