import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { topics } from '../../schema/events.ts'
import { plans } from '../../schema/plans.ts'
import { migrations } from '../../schema/tenant/migrations.ts'
import { HANDOFF_PATHS } from '../kernel/handoff-routes.ts'
import type { CallOptions } from '../kernel/http-client.ts'
import type { Role } from '../kernel/roles.ts'
import { ownerOf } from '../kernel/tenant-owner.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { type FakeUser, fakeClient } from './fake-client.ts'
import { createTenantsApp } from './routes.ts'
import { tenantDb } from './store.ts'
import { applySubscriptionChange } from './upgrade.ts'

describe('tenant service', () => {
  let kit: TestKit
  let client: ReturnType<typeof fakeClient>
  let app: ReturnType<typeof createTenantsApp>

  beforeEach(async () => {
    kit = await createTestKit('tenant', { migrations })
    client = fakeClient()
    kit.ctx.client = client
    app = createTenantsApp(kit.ctx)
  })
  afterEach(() => kit.cleanup())

  const req = async (
    method: string,
    path: string,
    who: { tenantId: string; role?: Role } | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const auth = who ? await kit.authFor(who) : {}
    const res = await app.handle(
      new Request(`http://tenant${path}`, {
        method,
        headers: {
          ...auth,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      }),
    )
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const operator = { tenantId: 'platform', role: 'Admin' as Role }
  const create = (body: Record<string, unknown>) =>
    req('POST', '/api/v1/tenants', operator, { admin_email: 'boss@acme.test', ...body })

  it('creates a Free tenant with a slug id, tier features, a placement profile and an event', async () => {
    const res = await create({ name: 'Acme Trading Ltd' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      id: 'acme-trading-ltd',
      name: 'Acme Trading Ltd',
      plan: 'free',
      isolation: 'shared',
      status: 'active',
      timezone: 'Africa/Nairobi',
      features: { advanced_analytics: false, bulk_upload: true, api_access: true },
      invite_token: 'inv-1',
    })
    expect(typeof res.body.created_at).toBe('string')
    expect(client.users[0]).toMatchObject({
      tenant_id: 'acme-trading-ltd',
      email: 'boss@acme.test',
      role: 'Admin',
    })
    const call = client.calls[0]!
    expect(call.opts.token).toBeString()
    expect(call.opts.requestId).toBeString()
    expect(kit.registry.placement('acme-trading-ltd')).toEqual({
      isolation: 'shared',
      plan: 'free',
      status: 'active',
      features: { advanced_analytics: false, bulk_upload: true, api_access: true },
      timezone: 'Africa/Nairobi',
      as_of: res.body.updated_at,
    })
    await kit.ctx.relay.flush()
    const event = kit.bus.published.find((e) => e.type === topics.tenantsChanged)
    expect(event).toMatchObject({
      tenant_id: 'acme-trading-ltd',
      data: { change: 'created', plan: 'free', isolation: 'shared', status: 'active' },
    })
  })

  it('answers 409 for a duplicate id and 422 for malformed or reserved ids', async () => {
    expect((await create({ id: 'acme', name: 'A' })).status).toBe(201)
    expect((await create({ id: 'acme', name: 'B', admin_email: 'x@acme.test' })).status).toBe(409)
    for (const id of ['../evil', 'Upper', 'a', '_shared', 'platform', 'a/b', '-x']) {
      const res = await create({ id, name: 'Bad', admin_email: `${id.length}@x.test` })
      expect(res.status).toBe(422)
    }
    expect((await create({ name: '!!!', admin_email: 'y@x.test' })).status).toBe(422)
    expect(
      (await create({ name: 'Tz', timezone: 'Mars/Base', admin_email: 'z@x.test' })).status,
    ).toBe(422)
    expect(existsSync(join(kit.dataDir, 'evil'))).toBe(false)
  })

  it('lets only the operator create and list tenants', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    expect(
      (await req('POST', '/api/v1/tenants', admin, { name: 'X', admin_email: 'a@b.test' })).status,
    ).toBe(403)
    expect((await req('GET', '/api/v1/tenants', admin)).status).toBe(403)
    const list = await req('GET', '/api/v1/tenants', operator)
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual(['acme'])
    expect((await req('GET', '/api/v1/tenants', null)).status).toBe(401)
  })

  it('shows a tenant to its own users only; other tenants get 403, unknown 404', async () => {
    await create({ id: 'acme', name: 'Acme' })
    await create({ id: 'beta', name: 'Beta', admin_email: 'b@beta.test' })
    const viewer = { tenantId: 'acme', role: 'Viewer' as Role }
    expect((await req('GET', '/api/v1/tenants/acme', viewer)).body).toMatchObject({ id: 'acme' })
    expect((await req('GET', '/api/v1/tenants/beta', viewer)).status).toBe(403)
    expect((await req('GET', '/api/v1/tenants/beta/users', { tenantId: 'acme' })).status).toBe(403)
    expect((await req('GET', '/api/v1/tenants/nope', operator)).status).toBe(404)
    expect((await req('GET', '/api/v1/tenants/..%2Fetc', operator)).status).toBe(422)
    expect(
      (await req('GET', '/api/v1/tenants/acme', viewer, undefined, { 'x-tenant-id': 'beta' }))
        .status,
    ).toBe(403)
  })

  it('answers the platform for a tenant whose first Admin is being made, from its profile', async () => {
    // An auth on its own data dir asks for the tenant while the tenant service waits on it.
    const seen: Array<{ status: number; body: any }> = []
    const call = client.call.bind(client)
    client.call = async (service, path, opts) => {
      if (service === 'auth') {
        seen.push(await req('GET', '/api/v1/tenants/acme', operator))
        seen.push(await req('GET', '/api/v1/tenants/acme', { tenantId: 'acme' }))
      }
      return call(service, path, opts)
    }
    const created = await create({ id: 'acme', name: 'Acme', plan: 'pro' })
    expect(created.status).toBe(201)
    expect(seen[0]).toMatchObject({
      status: 200,
      body: { id: 'acme', plan: 'pro', isolation: 'schema', status: 'active' },
    })
    expect(seen[0]!.body.updated_at).toBe(created.body.updated_at)
    expect(seen[1]!.status).toBe(404)
    // Once the row is in, it is the answer.
    expect((await req('GET', '/api/v1/tenants/acme', operator)).body.name).toBe('Acme')
  })

  /**
   * Starts moving acme to the analytics instance the hash does not pick, with the new instance's
   * pull held until `openPull`; `order` records the pull and each billing plan change as they
   * happen. Resolves once the pull was asked for.
   */
  const moveWithPullHeld = async () => {
    await create({ id: 'acme', name: 'Acme' })
    const instances = ['http://analytics-a.test', 'http://analytics-b.test']
    const to = instances.find((i) => i !== ownerOf('acme', instances))!
    let openPull = () => {}
    const pulling = new Promise<void>((resolve) => {
      openPull = resolve
    })
    let pullStarted = () => {}
    const started = new Promise<void>((resolve) => {
      pullStarted = resolve
    })
    const order: string[] = []
    const plain = client.call.bind(client)
    kit.ctx.client = {
      ...client,
      instances: () => instances,
      async call<T>(service: string, path: string, opts: CallOptions = {}): Promise<T> {
        if (!path.startsWith('/internal/')) {
          if (path === '/api/v1/billing/subscriptions/upgrade') order.push('billing asked')
          return plain<T>(service, path, opts)
        }
        client.calls.push({ service, path, opts })
        if (path === HANDOFF_PATHS.pull) {
          pullStarted()
          await pulling
          order.push('pulled')
        }
        return { rows: 3, republished: 0 } as T
      },
    } as typeof kit.ctx.client
    const move = req('POST', '/api/v1/tenants/acme/instances', operator, {
      service: 'analytics',
      instance: to,
    })
    await started
    return { to, move, order, openPull }
  }

  it('moves a tenant to another instance keeping a change made while its files were copied', async () => {
    const { to, move, openPull } = await moveWithPullHeld()
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    expect((await req('PATCH', '/api/v1/tenants/acme', admin, { name: 'Acme Two' })).status).toBe(
      200,
    )
    openPull()
    expect((await move).body).toMatchObject({ moved: true, to, rows: 3 })
    const after = (await req('GET', '/api/v1/tenants/acme', admin)).body
    expect(after).toMatchObject({ name: 'Acme Two', instances: { analytics: to } })
  })

  it('finishes a move to another instance whose announcement the broker does not take in time', async () => {
    const { to, move, openPull } = await moveWithPullHeld()
    // A broker that never acknowledges: the tenant's change waits in the outbox.
    kit.ctx.relay = { ...kit.ctx.relay, flush: () => new Promise<void>(() => {}) }
    openPull()
    // The wait for the broker outlasts the request's: the move goes on as a job.
    const answer = await move
    const job =
      answer.status === 202
        ? await eventually(async () => {
            const r = await req('GET', `/api/v1/tenants/acme/jobs/${answer.body.id}`, operator)
            return r.body.status !== 'running' ? r.body : null
          }, 15_000)
        : { status: 'succeeded', result: answer.body }
    expect(job).toMatchObject({ status: 'succeeded', result: { moved: true, to, rows: 3 } })
  }, 30_000)

  it('waits with a plan change until a move to another instance is done', async () => {
    const { to, move, order, openPull } = await moveWithPullHeld()
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const upgrade = req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'Pro' })
    // Queued behind the move: billing is not asked while the files are copied. (Twenty turns of
    // the event loop are far more than the upgrade needs to reach billing when nothing holds it.)
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    openPull()
    expect((await move).body).toMatchObject({ moved: true, to })
    expect((await upgrade).status).toBe(200)
    expect(order).toEqual(['pulled', 'billing asked'])
    const after = (await req('GET', '/api/v1/tenants/acme', admin)).body
    expect(after).toMatchObject({ plan: 'pro', isolation: 'schema', instances: { analytics: to } })
  })

  it('finishes a plan change it answered 202 for even when it waited past the request deadline', async () => {
    const { move, openPull } = await moveWithPullHeld()
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    // The gateway gives the request 600 ms: it answers 202 after half of it, and the plan change
    // waits behind the move until that deadline has passed.
    const deadline = Date.now() + 600
    const answer = await req(
      'PUT',
      '/api/v1/tenants/acme/upgrade',
      admin,
      { plan: 'Pro' },
      { 'x-request-deadline': String(deadline) },
    )
    expect(answer.status).toBe(202)
    await eventually(() => Date.now() > deadline, 5_000, 'the request deadline passed')
    openPull()
    await move
    const job = await eventually(async () => {
      const r = await req('GET', `/api/v1/tenants/acme/jobs/${answer.body.id}`, admin)
      return r.body.status !== 'running' ? r.body : null
    }, 10_000)
    expect(job).toMatchObject({ status: 'succeeded', result: { plan: 'pro', isolation: 'schema' } })
  })

  it('updates name, time zone and settings (Admin), mirrored to the placement', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const res = await req('PATCH', '/api/v1/tenants/acme', admin, {
      name: 'Acme Ltd',
      timezone: 'Europe/London',
      settings: { currency: 'KES', low_balance_threshold: 500 },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      name: 'Acme Ltd',
      timezone: 'Europe/London',
      settings: { currency: 'KES', low_balance_threshold: 500 },
    })
    const put = await req('PUT', '/api/v1/tenants/acme', admin, { settings: { currency: null } })
    expect(put.body.settings).toEqual({ low_balance_threshold: 500 })
    expect(kit.registry.placement('acme').timezone).toBe('Europe/London')
    expect(
      (
        await req(
          'PATCH',
          '/api/v1/tenants/acme',
          { tenantId: 'acme', role: 'Manager' },
          { name: 'x' },
        )
      ).status,
    ).toBe(403)
    expect(
      (await req('PATCH', '/api/v1/tenants/acme', admin, { timezone: 'Nowhere' })).status,
    ).toBe(422)
  })

  it('overrides features over the tier defaults and writes the effective flags to the placement', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const off = await req('PUT', '/api/v1/tenants/acme/features', admin, { bulk_upload: false })
    expect(off.status).toBe(200)
    expect(off.body).toMatchObject({
      features: { advanced_analytics: false, bulk_upload: false, api_access: true },
      overrides: { bulk_upload: false },
      bulk_upload: false,
    })
    expect(kit.registry.placement('acme').features?.bulk_upload).toBe(false)
    const beyond = await req('PUT', '/api/v1/tenants/acme/features', admin, {
      advanced_analytics: true,
    })
    expect(beyond.status).toBe(402)
    const granted = await req('PUT', '/api/v1/tenants/acme/features', operator, {
      features: { advanced_analytics: true },
    })
    expect(granted.body.features.advanced_analytics).toBe(true)
    const got = await req('GET', '/api/v1/tenants/acme/features', {
      tenantId: 'acme',
      role: 'Viewer',
    })
    expect(got.body.features).toEqual({
      advanced_analytics: true,
      bulk_upload: false,
      api_access: true,
    })
    expect(
      (
        await req(
          'PUT',
          '/api/v1/tenants/acme/features',
          { tenantId: 'acme', role: 'Manager' },
          { bulk_upload: true },
        )
      ).status,
    ).toBe(403)
    expect(
      (await req('PUT', '/api/v1/tenants/acme/features', admin, { bulk_upload: 'yes' })).status,
    ).toBe(422)
    const reset = await req('PUT', '/api/v1/tenants/acme/features', admin, { bulk_upload: null })
    expect(reset.body.overrides).toEqual({ advanced_analytics: true })
  })

  it('upgrades Free to Pro: isolation, feature defaults, placement and an updated event', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const bad = await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'gold' })
    expect(bad.status).toBe(422)
    const res = await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'Pro' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      plan: 'pro',
      isolation: 'schema',
      previous_plan: 'free',
      features: { advanced_analytics: true },
    })
    expect(kit.registry.placement('acme')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    expect(kit.registry.pathOf('analytics', 'acme')).toBe(
      join(kit.dataDir, 'tenants', 'acme', 'analytics.db'),
    )
    const ent = await req('PUT', '/api/v1/tenants/acme/upgrade', operator, { plan: 'enterprise' })
    expect(ent.body).toMatchObject({ isolation: 'database', database_path: 'tenants/acme' })
    const placement = JSON.parse(
      readFileSync(join(kit.dataDir, 'tenants', 'acme', 'placement.json'), 'utf8'),
    )
    expect(placement).toMatchObject({ isolation: 'database', database_path: 'tenants/acme' })
    await kit.ctx.relay.flush()
    const changes = kit.bus.published
      .filter((e) => e.type === topics.tenantsChanged)
      .map((e) => e.data as { change: string; plan: string })
    expect(changes.map((c) => `${c.change}:${c.plan}`)).toEqual([
      'created:free',
      'updated:pro',
      'updated:enterprise',
    ])
  })

  it('changes the plan through billing with the caller token, and applies its answer at once', async () => {
    client.plans.push({
      id: 'starter',
      tier: 'pro',
      price: 500,
      limits: { users: 2 },
      features: { advanced_analytics: true, bulk_upload: false, api_access: true },
    })
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const upgrades = () =>
      client.calls.filter((c) => c.path === '/api/v1/billing/subscriptions/upgrade')
    // Refusals of the tenant service come before billing is asked.
    for (const [who, body, status] of [
      [admin, { plan: 'enterprise', database_path: 'x' }, 403],
      [operator, { plan: 'pro', database_path: 'volumes/acme' }, 422],
      [operator, { plan: 'enterprise', database_path: '../out' }, 422],
      [admin, { plan: 'gold' }, 422],
    ] as const) {
      expect((await req('PUT', '/api/v1/tenants/acme/upgrade', who, body)).status).toBe(status)
    }
    expect(upgrades()).toEqual([])
    const res = await req(
      'PUT',
      '/api/v1/tenants/acme/upgrade',
      admin,
      { plan: 'starter' },
      {
        'x-request-id': 'req-door-1',
      },
    )
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ plan: 'starter', isolation: 'schema', previous_plan: 'free' })
    expect(upgrades()).toHaveLength(1)
    expect(upgrades()[0]!.opts).toMatchObject({
      method: 'POST',
      body: { tenant_id: 'acme', plan: 'starter' },
      requestId: 'req-door-1',
    })
    expect(upgrades()[0]!.opts.token).toBeString()
    expect(client.subscriptions.get('acme')).toEqual({ plan: 'starter', revision: 2 })
    // The event of the same change arrives after the door applied it: nothing moves again.
    const moves = () => tenantDb(kit.ctx).sqlite.query('SELECT state FROM tenant_moves').all()
    const change = client.changes[0]!
    await applySubscriptionChange(kit.ctx, {
      id: 'evt-door-1',
      type: topics.subscriptionsChanged,
      version: 1,
      tenant_id: 'acme',
      occurred_at: kit.ctx.clock.now().toISOString(),
      data: {
        ...change,
        previous_plan: 'free',
        status: 'active',
        previous_status: 'active',
        reason: 'upgraded',
        current_period_start: '2026-11-01T00:00:00.000Z',
        current_period_end: '2026-12-01T00:00:00.000Z',
      },
    })
    expect(moves()).toEqual([{ state: 'done' }])
    expect(kit.registry.placement('acme')).toMatchObject({ plan: 'starter', isolation: 'schema' })
  })

  it('moves a tenant to a plan billing defines: its tier isolation, features and user limit', async () => {
    client.plans.push({
      id: 'starter',
      tier: 'pro',
      price: 500,
      limits: { users: 2 },
      features: { advanced_analytics: true, bulk_upload: false, api_access: true },
    })
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const unknown = await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'gold' })
    expect(unknown.status).toBe(422)
    const res = await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'starter' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      plan: 'starter',
      isolation: 'schema',
      previous_plan: 'free',
      features: { advanced_analytics: true, bulk_upload: false, api_access: true },
    })
    const asked = client.calls.filter((c) => c.path === '/api/v1/billing/plans')
    expect(asked.length).toBe(2)
    expect(asked[1]!.opts.token).toBeString()
    expect(kit.registry.placement('acme')).toMatchObject({
      plan: 'starter',
      isolation: 'schema',
      features: { advanced_analytics: true, bulk_upload: false },
    })
    expect(kit.registry.pathOf('analytics', 'acme')).toBe(
      join(kit.dataDir, 'tenants', 'acme', 'analytics.db'),
    )
    // Later reads use the terms kept on the row: billing is not asked again.
    client.plans.length = 0
    const features = await req('GET', '/api/v1/tenants/acme/features', admin)
    expect(features.body.defaults).toEqual({
      advanced_analytics: true,
      bulk_upload: false,
      api_access: true,
    })
    const beyond = await req('PUT', '/api/v1/tenants/acme/features', admin, { bulk_upload: true })
    expect(beyond.status).toBe(402)
    const second = await req('POST', '/api/v1/tenants/acme/users', admin, {
      email: 'two@acme.test',
      role: 'Viewer',
    })
    expect(second.status).toBe(201)
    const third = await req('POST', '/api/v1/tenants/acme/users', admin, {
      email: 'three@acme.test',
      role: 'Viewer',
    })
    expect(third.status).toBe(402)
    expect(third.body).toMatchObject({ limit: 'users', max: 2 })
    expect(client.calls.filter((c) => c.path === '/api/v1/billing/plans').length).toBe(2)
    // Back to a built-in plan: its own defaults again, and the shared tier.
    const back = await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'free' })
    expect(back.body).toMatchObject({ plan: 'free', isolation: 'shared', previous_plan: 'starter' })
    expect(back.body.features).toEqual(plans.free.features)
  })

  it('creates a tenant on a billing plan of the enterprise tier, or refuses an unknown plan', async () => {
    client.plans.push({
      id: 'bank',
      tier: 'enterprise',
      price: 90000,
      limits: { users: null },
      features: { advanced_analytics: true, bulk_upload: true, api_access: false },
    })
    const res = await create({ id: 'big', name: 'Big', plan: 'bank' })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      plan: 'bank',
      isolation: 'database',
      database_path: 'tenants/big',
      features: { api_access: false },
    })
    expect((await create({ id: 'nope', name: 'Nope', plan: 'platinum' })).status).toBe(422)
    expect((await req('GET', '/api/v1/tenants/nope', operator)).status).toBe(404)
    // Between two enterprise-tier plans the dedicated location stays.
    const ent = await req('PUT', '/api/v1/tenants/big/upgrade', operator, { plan: 'enterprise' })
    expect(ent.body).toMatchObject({ isolation: 'database', database_path: 'tenants/big' })
  })

  it('refuses a database_path from a tenant Admin and paths that escape', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    expect(
      (
        await req('PUT', '/api/v1/tenants/acme/upgrade', admin, {
          plan: 'enterprise',
          database_path: 'x',
        })
      ).status,
    ).toBe(403)
    for (const database_path of ['../outside', 'tenants/other', 'platform', 'a/../../b']) {
      const res = await req('PUT', '/api/v1/tenants/acme/upgrade', operator, {
        plan: 'enterprise',
        database_path,
      })
      expect(res.status).toBe(422)
    }
    expect(existsSync(join(kit.dataDir, '..', 'outside'))).toBe(false)
    const ok = await req('PUT', '/api/v1/tenants/acme/upgrade', operator, {
      plan: 'enterprise',
      database_path: 'volumes/acme',
    })
    expect(ok.body.database_path).toBe('volumes/acme')
    expect(kit.registry.pathOf('analytics', 'acme')).toBe(
      join(kit.dataDir, 'volumes', 'acme', 'analytics.db'),
    )
  })

  it('invites, lists and removes users of the tenant in the path only', async () => {
    await create({ id: 'acme', name: 'Acme' })
    await create({ id: 'beta', name: 'Beta', admin_email: 'b@beta.test' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const inv = await req('POST', '/api/v1/tenants/acme/users', admin, {
      email: 'ann@acme.test',
      role: 'analyst',
    })
    expect(inv.status).toBe(201)
    expect(inv.body).toMatchObject({
      email: 'ann@acme.test',
      role: 'Analyst',
      invite_token: 'inv-3',
      expires_at: '2026-12-01T00:00:00.000Z',
    })
    const list = await req('GET', '/api/v1/tenants/acme/users', admin)
    expect(list.body.data.map((u: FakeUser) => u.email).sort()).toEqual([
      'ann@acme.test',
      'boss@acme.test',
    ])
    const betaUser = client.users.find((u) => u.tenant_id === 'beta')!
    expect((await req('DELETE', `/api/v1/tenants/acme/users/${betaUser.id}`, admin)).status).toBe(
      404,
    )
    expect((await req('DELETE', `/api/v1/tenants/acme/users/${inv.body.id}`, admin)).status).toBe(
      204,
    )
    expect(client.users.some((u) => u.id === inv.body.id)).toBe(false)
    expect(
      (
        await req('POST', '/api/v1/tenants/acme/users', admin, {
          email: 'x@acme.test',
          role: 'Owner',
        })
      ).status,
    ).toBe(422)
  })

  it('stops inviting at the plan user limit with a 402 naming it', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    const max = plans.free.limits.users!
    // The tenant's Admin is the first user; invitations fill the rest.
    for (const who of Array.from({ length: max - 1 }, (_, i) => `user${i}`)) {
      const r = await req('POST', '/api/v1/tenants/acme/users', admin, {
        email: `${who}@acme.test`,
        role: 'Viewer',
      })
      expect(r.status).toBe(201)
    }
    const over = await req('POST', '/api/v1/tenants/acme/users', admin, {
      email: 'c@acme.test',
      role: 'Viewer',
    })
    expect(over.status).toBe(402)
    expect(over.body).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'users', max })
  })

  it('proxies usage to billing with the caller token', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const res = await req('GET', '/api/v1/tenants/acme/usage', { tenantId: 'acme', role: 'Viewer' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      tenant_id: 'acme',
      plan: 'free',
      metrics: { transactions: { used: 12, limit: 1000 } },
    })
    const call = client.calls.at(-1)!
    expect(call).toMatchObject({ service: 'billing', path: '/api/v1/billing/usage/acme' })
    expect(call.opts.token).toBeString()
  })

  it('suspends and resumes (operator); a suspended tenant reads but does not change', async () => {
    await create({ id: 'acme', name: 'Acme' })
    const admin = { tenantId: 'acme', role: 'Admin' as Role }
    expect((await req('POST', '/api/v1/tenants/acme/suspend', admin)).status).toBe(403)
    const s = await req('POST', '/api/v1/tenants/acme/suspend', operator)
    expect(s.body.status).toBe('suspended')
    expect(kit.registry.placement('acme').status).toBe('suspended')
    expect((await req('GET', '/api/v1/tenants/acme', admin)).status).toBe(200)
    expect((await req('PATCH', '/api/v1/tenants/acme', admin, { name: 'x' })).status).toBe(403)
    expect((await req('PUT', '/api/v1/tenants/acme/upgrade', admin, { plan: 'pro' })).status).toBe(
      403,
    )
    const r = await req('POST', '/api/v1/tenants/acme/resume', operator)
    expect(r.body.status).toBe('active')
    await kit.ctx.relay.flush()
    const changes = kit.bus.published
      .filter((e) => e.type === topics.tenantsChanged)
      .map((e) => (e.data as { change: string }).change)
    expect(changes).toEqual(['created', 'suspended', 'updated'])
  })

  it('erases a tenant only with ?confirm=<id>: users, folder and record', async () => {
    await create({ id: 'acme', name: 'Acme', plan: 'pro' })
    await create({ id: 'beta', name: 'Beta', admin_email: 'b@beta.test' })
    kit.registry.tenant('analytics', 'acme')
    expect(existsSync(join(kit.dataDir, 'tenants', 'acme', 'analytics.db'))).toBe(true)
    expect((await req('DELETE', '/api/v1/tenants/acme', operator)).status).toBe(422)
    expect((await req('DELETE', '/api/v1/tenants/acme?confirm=beta', operator)).status).toBe(422)
    expect(
      (await req('DELETE', '/api/v1/tenants/acme?confirm=acme', { tenantId: 'acme' })).status,
    ).toBe(403)
    const del = await req('DELETE', '/api/v1/tenants/acme?confirm=acme', operator)
    expect(del.status).toBe(200)
    expect(del.body).toMatchObject({ id: 'acme', deleted: true, users_removed: 1 })
    expect(existsSync(join(kit.dataDir, 'tenants', 'acme'))).toBe(false)
    expect((await req('GET', '/api/v1/tenants/acme', operator)).status).toBe(404)
    expect(client.users.map((u) => u.tenant_id)).toEqual(['beta'])
  })

  it('answers 404 TENANT_NOT_FOUND for a tenant it never created, even one its users name, and after erasure', async () => {
    const legacyAdmin = { tenantId: 'legacy', role: 'Admin' as Role }
    const up = await req('PUT', '/api/v1/tenants/legacy/upgrade', legacyAdmin, { plan: 'pro' })
    expect(up.status).toBe(404)
    expect(up.body).toMatchObject({ code: 'TENANT_NOT_FOUND' })
    client.users.push({
      id: 'usr_old',
      tenant_id: 'old-co',
      email: 'o@old.test',
      role: 'Admin',
      status: 'active',
    })
    expect((await req('GET', '/api/v1/tenants/old-co', operator)).body).toMatchObject({
      status: 404,
      code: 'TENANT_NOT_FOUND',
    })
    expect((await create({ id: 'gone-co', name: 'Gone', admin_email: 'g@gone.test' })).status).toBe(
      201,
    )
    expect((await req('DELETE', '/api/v1/tenants/gone-co?confirm=gone-co', operator)).status).toBe(
      200,
    )
    expect(kit.registry.hasProfile('gone-co')).toBe(false)
    expect(
      (await create({ id: 'gone-co', name: 'Gone again', admin_email: 'n@gone.test' })).status,
    ).toBe(201)
  })
})
