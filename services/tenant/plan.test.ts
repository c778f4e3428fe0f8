import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { topics } from '../../schema/events.ts'
import { migrations } from '../../schema/tenant/migrations.ts'
import { tenantMoves } from '../../schema/tenant/tables.ts'
import { moveTenantData } from '../../tenants/move.ts'
import type { Db } from '../kernel/db.ts'
import { newId } from '../kernel/ids.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { fakeClient } from './fake-client.ts'
import { resumeMoves } from './plan-resume.ts'
import { createTenantsApp } from './routes.ts'
import { tenantDb } from './store.ts'
import { applySubscriptionChange } from './upgrade.ts'

const countOf = (db: Db, tenantId: string) =>
  db.sqlite
    .query<{ n: number }, [string]>('SELECT count(*) AS n FROM outbox WHERE tenant_id = ?')
    .get(tenantId)!.n

/**
 * Sent events of now: the relay's first poll prunes events sent more than 30 days ago, which made
 * a fixed date in the past vanish whenever a test ran past that poll.
 */
function seedOutbox(db: Db, tenantId: string, n: number) {
  const now = new Date().toISOString()
  db.write(() => {
    const ins = db.sqlite.prepare(
      "INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, 't', ?, '{}', ?, ?)",
    )
    for (let i = 0; i < n; i++) ins.run(newId('evt'), tenantId, now, now)
  })
}

describe('plan changes outside the upgrade route', () => {
  let kit: TestKit

  beforeEach(async () => {
    kit = await createTestKit('tenant', { migrations })
    kit.ctx.client = fakeClient()
    const app = createTenantsApp(kit.ctx)
    const res = await app.handle(
      new Request('http://tenant/api/v1/tenants', {
        method: 'POST',
        headers: {
          ...(await kit.authFor({ tenantId: 'platform' })),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ id: 'acme', name: 'Acme', admin_email: 'a@acme.test' }),
      }),
    )
    expect(res.status).toBe(201)
  })
  afterEach(() => kit.cleanup())

  const subscriptionEvent = (
    plan: string,
    revision: number | undefined,
    extra: { plan_terms?: unknown; id?: string } = {},
  ) => ({
    id: extra.id ?? newId('evt'),
    type: topics.subscriptionsChanged,
    version: 1,
    tenant_id: 'acme',
    occurred_at: kit.ctx.clock.now().toISOString(),
    data: {
      plan,
      previous_plan: 'free',
      status: 'active',
      previous_status: 'active',
      reason: 'upgraded',
      current_period_start: '2026-11-01T00:00:00.000Z',
      current_period_end: '2026-12-01T00:00:00.000Z',
      ...(revision === undefined ? {} : { plan_revision: revision }),
      ...('plan_terms' in extra ? { plan_terms: extra.plan_terms } : {}),
    },
  })
  const apply = (event: ReturnType<typeof subscriptionEvent>) =>
    applySubscriptionChange(kit.ctx, event as Parameters<typeof applySubscriptionChange>[1])
  const tenantRow = () =>
    tenantDb(kit.ctx)
      .sqlite.query("SELECT plan, isolation, plan_revision FROM tenants WHERE id = 'acme'")
      .get()
  const moveStates = () =>
    tenantDb(kit.ctx)
      .orm.select()
      .from(tenantMoves)
      .all()
      .map((m) => m.state)

  it('follows a subscriptions.changed plan once, moving the data; a repeat changes nothing', async () => {
    seedOutbox(kit.registry.tenant('analytics', 'acme'), 'acme', 40)
    const shared = kit.registry.tenant('analytics', 'acme')
    const event = subscriptionEvent('pro', 2)
    await apply(event)
    expect(kit.registry.placement('acme')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    expect(countOf(kit.registry.tenant('analytics', 'acme'), 'acme')).toBe(40)
    expect(countOf(shared, 'acme')).toBe(0)
    await apply(event)
    // The same plan again under a new revision (a renewal, a status change): only the revision.
    await apply(subscriptionEvent('pro', 3))
    expect(tenantRow()).toEqual({ plan: 'pro', isolation: 'schema', plan_revision: 3 })
    expect(moveStates()).toEqual(['done'])
  })

  it('ignores a replayed old event for a plan a later revision superseded, whatever its time', async () => {
    const old = subscriptionEvent('pro', 2)
    kit.ctx.clock.advance(60_000)
    await apply(subscriptionEvent('enterprise', 3))
    expect(tenantRow()).toMatchObject({ plan: 'enterprise', plan_revision: 3 })
    // Replayed after the newer one (a broker outage, `mmp replay`): older revision, no move.
    await apply(old)
    // A late event newer in time but older in revision is stale too: order is billing's.
    kit.ctx.clock.advance(60_000)
    await apply(subscriptionEvent('free', 1))
    expect(tenantRow()).toEqual({ plan: 'enterprise', isolation: 'database', plan_revision: 3 })
    expect(kit.registry.placement('acme')).toMatchObject({ isolation: 'database' })
    expect(moveStates()).toEqual(['done'])
    // An event without a revision (written before revisions existed) no longer counts.
    await apply(subscriptionEvent('pro', undefined))
    expect(tenantRow()).toMatchObject({ plan: 'enterprise' })
  })

  it('applies a custom plan from the terms the event carries, and skips one without them', async () => {
    const terms = {
      tier: 'pro',
      features: { advanced_analytics: true, bulk_upload: false, api_access: true },
      users: 3,
    }
    await apply(subscriptionEvent('mystery', 2, { plan_terms: null }))
    expect(tenantRow()).toMatchObject({ plan: 'free', plan_revision: 0 })
    await apply(subscriptionEvent('starter', 3, { plan_terms: terms }))
    expect(tenantRow()).toEqual({ plan: 'starter', isolation: 'schema', plan_revision: 3 })
    expect(kit.registry.placement('acme')).toMatchObject({
      plan: 'starter',
      isolation: 'schema',
      features: terms.features,
    })
  })

  it('finishes a move interrupted after the placement switch: stale shared rows are purged', async () => {
    const shared = kit.registry.tenant('analytics', 'acme')
    seedOutbox(shared, 'acme', 25)
    seedOutbox(shared, 'other', 5)
    const from = kit.registry.placement('acme')
    const to = { ...from, isolation: 'schema' as const, plan: 'pro' }
    tenantDb(kit.ctx).write((orm) =>
      orm
        .insert(tenantMoves)
        .values({
          id: 'req_crash',
          tenantId: 'acme',
          fromPlacement: JSON.stringify(from),
          toPlacement: JSON.stringify(to),
          state: 'moving',
          startedAt: kit.ctx.clock.now().toISOString(),
        })
        .run(),
    )
    await expect(
      moveTenantData(kit.registry, {
        tenantId: 'acme',
        from,
        to,
        services: ['analytics'],
        switchPlacement: () => {
          kit.registry.setPlacement('acme', to)
          throw new Error('crash right after the switch')
        },
      }),
    ).rejects.toThrow(/crash/)
    expect(countOf(shared, 'acme')).toBe(25)
    expect(resumeMoves(kit.ctx)).toBe(1)
    expect(countOf(shared, 'acme')).toBe(0)
    expect(countOf(shared, 'other')).toBe(5)
    expect(countOf(kit.registry.tenant('analytics', 'acme'), 'acme')).toBe(25)
    const move = tenantDb(kit.ctx)
      .orm.select()
      .from(tenantMoves)
      .where(eq(tenantMoves.id, 'req_crash'))
      .get()
    expect(move?.state).toBe('done')
    const row = tenantDb(kit.ctx).sqlite.query("SELECT plan FROM tenants WHERE id = 'acme'").get()
    expect(row).toEqual({ plan: 'pro' })
  })

  it('keeps the terms of a custom plan when it finishes an interrupted move to it', () => {
    const from = kit.registry.placement('acme')
    const terms = {
      tier: 'pro',
      features: { advanced_analytics: true, bulk_upload: false, api_access: true },
      users: 3,
    }
    const to = { ...from, isolation: 'schema' as const, plan: 'starter' }
    tenantDb(kit.ctx).write((orm) =>
      orm
        .insert(tenantMoves)
        .values({
          id: 'req_crash2',
          tenantId: 'acme',
          fromPlacement: JSON.stringify(from),
          toPlacement: JSON.stringify({ ...to, plan_terms: JSON.stringify(terms) }),
          state: 'moving',
          startedAt: kit.ctx.clock.now().toISOString(),
        })
        .run(),
    )
    kit.registry.setPlacement('acme', to)
    expect(resumeMoves(kit.ctx)).toBe(1)
    const row = tenantDb(kit.ctx)
      .sqlite.query("SELECT plan, isolation, plan_terms FROM tenants WHERE id = 'acme'")
      .get() as { plan: string; isolation: string; plan_terms: string }
    expect(row).toMatchObject({ plan: 'starter', isolation: 'schema' })
    expect(JSON.parse(row.plan_terms)).toEqual(terms)
    expect(kit.registry.placement('acme').features).toEqual(terms.features)
  })

  it('clears partial copies of a move interrupted before the switch; the old placement stands', async () => {
    const shared = kit.registry.tenant('analytics', 'acme')
    seedOutbox(shared, 'acme', 12)
    const from = kit.registry.placement('acme')
    const to = { ...from, isolation: 'schema' as const, plan: 'pro' }
    tenantDb(kit.ctx).write((orm) =>
      orm
        .insert(tenantMoves)
        .values({
          id: 'req_early',
          tenantId: 'acme',
          fromPlacement: JSON.stringify(from),
          toPlacement: JSON.stringify(to),
          state: 'moving',
          startedAt: kit.ctx.clock.now().toISOString(),
        })
        .run(),
    )
    await expect(
      moveTenantData(kit.registry, {
        tenantId: 'acme',
        from,
        to,
        services: ['analytics'],
        switchPlacement: () => {
          throw new Error('crash before the switch')
        },
      }),
    ).rejects.toThrow(/crash/)
    const own = kit.registry.openAt('analytics', to, 'acme')
    expect(countOf(own, 'acme')).toBe(12)
    resumeMoves(kit.ctx)
    expect(countOf(own, 'acme')).toBe(0)
    expect(countOf(shared, 'acme')).toBe(12)
    expect(kit.registry.placement('acme').isolation).toBe('shared')
    const row = tenantDb(kit.ctx).sqlite.query("SELECT plan FROM tenants WHERE id = 'acme'").get()
    expect(row).toEqual({ plan: 'free' })
  })
})
