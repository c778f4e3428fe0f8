import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, eventually, type TestPlatform } from './support/platform.ts'
import { type SplitPlatform, startSplitPlatform } from './support/split.ts'
import { budgetMs, referenceMs } from './support/timing.ts'

/**
 * Removing a user or logging out kills the access token at once everywhere: on the gateway, on
 * a service in the same process and on a service in another `mmp serve --only …` process on the
 * same external broker (the `mobilemoney.auth.revoked` topic), and in a process started after the
 * revocation (it loads the list from auth).
 */
describe('access-token revocation across processes', () => {
  let split: SplitPlatform
  let front: TestPlatform
  let back: TestPlatform
  let broker: SplitPlatform['broker']
  let operator: string
  let admin: string

  beforeAll(async () => {
    split = await startSplitPlatform()
    ;({ front, back, broker } = split)
    operator = await front.login()
    const made = await api(front.gateway, operator).post('/api/v1/tenants', {
      id: 'revoke',
      name: 'Revoke Ltd',
      admin_email: 'admin@revoke.test',
      admin_password: 'revoke-admin-password',
    })
    expect(made.status).toBe(201)
    admin = await front.login('admin@revoke.test', 'revoke-admin-password')
  }, 90_000)
  afterAll(() => split.dispose())

  const viewer = async (email: string) => {
    const created = await api(front.gateway, admin).post('/api/v1/auth/users', {
      tenant_id: 'revoke',
      email,
      role: 'Viewer',
      password: 'viewer-password-1',
    })
    expect(created.status).toBe(201)
    const login = await api(front.gateway).post('/api/v1/auth/login', {
      email,
      password: 'viewer-password-1',
    })
    expect(login.status).toBe(200)
    return { id: created.body.id as string, session: login.body }
  }
  /** Status of the same token on the gateway and direct on a service port of each process. */
  const statuses = async (token: string) => ({
    gateway: (await api(front.gateway, token).get('/api/v1/cashflow/daily?tenant_id=revoke'))
      .status,
    sameProcess: (await api(front.url('analytics'), token).get('/api/v1/analytics/transactions'))
      .status,
    otherProcess: (await api(back.url('cashflow'), token).get('/api/v1/cashflow/settings')).status,
  })
  const dead = { gateway: 401, sameProcess: 401, otherProcess: 401 }
  const live = { gateway: 200, sameProcess: 200, otherProcess: 200 }
  const within = (ms: number, token: string, want: typeof dead) =>
    eventually(
      async () => {
        const got = await statuses(token)
        return JSON.stringify(got) === JSON.stringify(want) && got
      },
      ms,
      `token statuses ${JSON.stringify(want)}`,
    )

  /**
   * A second on an idle machine; on a busy one, a few times what asking every process takes right
   * now. Either way far below the token's lifetime (15 min), which is what a revocation that did
   * not travel would take to show.
   */
  const revocationBudget = async (token: string) =>
    budgetMs({ floor: 1000, reference: await referenceMs(() => statuses(token), 3), factor: 10 })

  it('answers 401 for a removed user’s token within a second, everywhere', async () => {
    const v = await viewer('v1@revoke.test')
    const other = await viewer('v2@revoke.test')
    expect(await statuses(v.session.access_token)).toEqual(live)
    expect(await statuses(other.session.access_token)).toEqual(live)
    const budget = await revocationBudget(other.session.access_token)

    const removed = await api(front.gateway, admin).delete(`/api/v1/tenants/revoke/users/${v.id}`)
    expect(removed.status).toBe(204)
    await within(budget, v.session.access_token, dead)
    const problem = await api(front.gateway, v.session.access_token).get('/api/v1/auth/me')
    expect(problem.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
    // Another user of the tenant keeps working.
    expect(await statuses(other.session.access_token)).toEqual(live)
    const list = await api(front.gateway, operator).get('/api/v1/auth/revocations')
    expect(list.body.data).toContainEqual(
      expect.objectContaining({ user_id: v.id, reason: 'removed' }),
    )
  })

  it('kills the access token on logout, and a process started later knows it', async () => {
    const v = await viewer('v3@revoke.test')
    const other = await viewer('v4@revoke.test')
    expect(await statuses(v.session.access_token)).toEqual(live)
    const budget = await revocationBudget(other.session.access_token)
    const out = await api(front.gateway).post('/api/v1/auth/logout', {
      refresh_token: v.session.refresh_token,
    })
    expect(out.status).toBe(204)
    await within(budget, v.session.access_token, dead)
    expect(await statuses(other.session.access_token)).toEqual(live)

    // Logging in again right away gives a working token.
    const again = await api(front.gateway).post('/api/v1/auth/login', {
      email: 'v3@revoke.test',
      password: 'viewer-password-1',
    })
    expect(await statuses(again.body.access_token)).toEqual(live)

    // The revocation list is the operator's to read.
    const list = await api(front.gateway, operator).get('/api/v1/auth/revocations')
    expect(list.status).toBe(200)
    const mine = list.body.data.filter((r: { user_id: string }) => r.user_id === v.id)
    expect(mine.map((r: { reason: string }) => r.reason)).toEqual(['logout'])
    expect((await api(front.gateway, admin).get('/api/v1/auth/revocations')).status).toBe(403)

    // A fresh process (crashed and restarted) loads the revocations from auth.
    await back.kill()
    await back.restart({ MMP_MQTT_URL: broker.url })
    await eventually(
      async () =>
        (await api(back.url('cashflow'), v.session.access_token).get('/api/v1/cashflow/settings'))
          .status === 401,
      5000,
      'the restarted process refuses the revoked token',
    )
    expect(
      (await api(back.url('cashflow'), other.session.access_token).get('/api/v1/cashflow/settings'))
        .status,
    ).toBe(200)
  })
})
