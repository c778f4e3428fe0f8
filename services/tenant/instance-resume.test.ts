import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { migrations } from '../../schema/tenant/migrations.ts'
import { tenantMoves, tenants } from '../../schema/tenant/tables.ts'
import { PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { HANDOFF_PATHS } from '../kernel/handoff-routes.ts'
import type { CallOptions } from '../kernel/http-client.ts'
import type { Role } from '../kernel/roles.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { PLATFORM_SYNC } from '../kernel/tokens.ts'
import { fakeClient } from './fake-client.ts'
import { finishHandoff, startHandoff } from './instance-journal.ts'
import { resumeHandoffs } from './instance-resume.ts'
import { createTenantsApp } from './routes.ts'
import { tenantDb } from './store.ts'

/** A tenant service that stopped in the middle of `mmp tenant move --to`, started again. */
describe('a move between instances cut short', () => {
  let kit: TestKit
  let internal: Array<{ path: string; opts: CallOptions }>
  let refuseReleases = 0
  const A = 'http://analytics-a.test'
  const B = 'http://analytics-b.test'

  beforeEach(async () => {
    kit = await createTestKit('tenant', { migrations })
    const client = fakeClient()
    internal = []
    refuseReleases = 0
    const plain = client.call.bind(client)
    kit.ctx.client = {
      ...client,
      instances: (service: string) => (service === 'analytics' ? [A, B] : []),
      async call<T>(service: string, path: string, opts: CallOptions = {}): Promise<T> {
        if (!path.startsWith('/internal/')) return plain<T>(service, path, opts)
        internal.push({ path, opts })
        if (path === HANDOFF_PATHS.release && refuseReleases-- > 0)
          throw new Error('analytics is unreachable')
        return { rows: 0, republished: 2 } as T
      },
    } as typeof kit.ctx.client
    const app = createTenantsApp(kit.ctx)
    const auth = await kit.authFor({ tenantId: 'platform', role: 'Admin' as Role })
    const res = await app.handle(
      new Request('http://tenant/api/v1/tenants', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'acme', name: 'Acme', admin_email: 'boss@acme.test' }),
      }),
    )
    expect(res.status).toBe(201)
    internal.length = 0
  })
  afterEach(() => kit.cleanup())

  const stateOf = (id: string) =>
    tenantDb(kit.ctx).orm.select().from(tenantMoves).where(eq(tenantMoves.id, id)).get()?.state
  const release = () => internal.filter((c) => c.path === HANDOFF_PATHS.release)

  it('gives the tenant back to its old instance when the record never named the new one', async () => {
    const id = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false })).toBe(1)
    expect(release()).toHaveLength(2)
    expect(release()[0]!.opts).toMatchObject({ instance: A, body: { tenant: 'acme' } })
    expect((release()[0]!.opts.body as { to?: string }).to).toBeUndefined()
    // The new instance erases what it may have pulled and learns the tenant stays on A.
    expect(release()[1]!.opts).toMatchObject({ instance: B, body: { tenant: 'acme', to: A } })
    // Asked as the platform, with no token: nobody is signed in at start.
    expect(release()[0]!.opts.headers?.[PURPOSE_HEADER]).toBe(PLATFORM_SYNC)
    expect(release()[0]!.opts.token).toBeUndefined()
    expect(internal.some((c) => c.path === HANDOFF_PATHS.replay)).toBe(true)
    expect(stateOf(id)).toBe('failed')
    // Finished once: a second start has nothing to do.
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false })).toBe(0)
  })

  it('has the old instance erase its copy when the record already names the new one', async () => {
    const id = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    tenantDb(kit.ctx).write((orm) =>
      orm
        .update(tenants)
        .set({ instances: JSON.stringify({ analytics: B }) })
        .where(eq(tenants.id, 'acme'))
        .run(),
    )
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false })).toBe(1)
    expect(release()[0]!.opts).toMatchObject({ instance: A, body: { tenant: 'acme', to: B } })
    expect(stateOf(id)).toBe('done')
  })

  it('asks again while the old instance is not up yet', async () => {
    const id = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    refuseReleases = 3
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false, retryMs: 1 })).toBe(1)
    expect(release()).toHaveLength(5)
    expect(stateOf(id)).toBe('failed')
  })

  it('ends earlier moves off the same instance with the one that finished, so no start redoes them', async () => {
    // A move whose old instance died: its release failed, so it stayed under way.
    const old = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    const elsewhere = startHandoff(kit.ctx, {
      tenantId: 'acme',
      service: 'analytics',
      from: B,
      to: A,
    })
    // Run again, it went through.
    const again = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    finishHandoff(kit.ctx, again, 'done')
    expect([stateOf(old), stateOf(again)]).toEqual(['done', 'done'])
    // A move off another instance is not covered by this one's release.
    expect(stateOf(elsewhere)).toBe('handoff')
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false })).toBe(1)
    expect(release().map((c) => c.opts.instance)).toEqual([B, A])
  })

  it('finishes the newest of several moves off one instance, which ends the others', async () => {
    const first = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    const second = startHandoff(kit.ctx, { tenantId: 'acme', service: 'analytics', from: A, to: B })
    expect(await resumeHandoffs(kit.ctx, { stopped: () => false })).toBe(2)
    // Released and replayed once, not once per move.
    expect(release()).toHaveLength(2)
    expect(internal.filter((c) => c.path === HANDOFF_PATHS.replay)).toHaveLength(1)
    expect([stateOf(first), stateOf(second)]).toEqual(['failed', 'failed'])
  })
})
