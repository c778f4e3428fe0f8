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
import { applySubscriptionChange, resumeMoves } from './plan.ts'
import { createTenantsApp } from './routes.ts'
import { tenantDb } from './store.ts'

const countOf = (db: Db, tenantId: string) =>
  db.sqlite
    .query<{ n: number }, [string]>('SELECT count(*) AS n FROM outbox WHERE tenant_id = ?')
    .get(tenantId)!.n

function seedOutbox(db: Db, tenantId: string, n: number) {
  db.write(() => {
    const ins = db.sqlite.prepare(
      "INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, 't', ?, '{}', '2026-01-01', '2026-01-01')",
    )
    for (let i = 0; i < n; i++) ins.run(newId('evt'), tenantId)
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

  const subscriptionEvent = (plan: string, occurredAt: Date, id = newId('evt')) => ({
    id,
    type: topics.subscriptionsChanged,
    version: 1,
    tenant_id: 'acme',
    occurred_at: occurredAt.toISOString(),
    data: {
      plan,
      previous_plan: 'free',
      status: 'active',
      previous_status: 'active',
      reason: 'upgrade',
      current_period_start: '2026-11-01T00:00:00.000Z',
      current_period_end: '2026-12-01T00:00:00.000Z',
    },
  })

  it('follows a subscriptions.changed plan once, moving the data, and ignores stale events', () => {
    seedOutbox(kit.registry.tenant('analytics', 'acme'), 'acme', 40)
    const shared = kit.registry.tenant('analytics', 'acme')
    kit.ctx.clock.advance(1000)
    const event = subscriptionEvent('pro', kit.ctx.clock.now())
    applySubscriptionChange(kit.ctx, event)
    expect(kit.registry.placement('acme')).toMatchObject({ isolation: 'schema', plan: 'pro' })
    expect(countOf(kit.registry.tenant('analytics', 'acme'), 'acme')).toBe(40)
    expect(countOf(shared, 'acme')).toBe(0)
    applySubscriptionChange(kit.ctx, event)
    const stale = subscriptionEvent('free', new Date(kit.ctx.clock.now().getTime() - 60_000))
    applySubscriptionChange(kit.ctx, stale)
    expect(kit.registry.placement('acme').plan).toBe('pro')
    const moves = tenantDb(kit.ctx).orm.select().from(tenantMoves).all()
    expect(moves.map((m) => m.state)).toEqual(['done'])
  })

  it('finishes a move interrupted after the placement switch: stale shared rows are purged', () => {
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
    expect(() =>
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
    ).toThrow(/crash/)
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

  it('clears partial copies of a move interrupted before the switch; the old placement stands', () => {
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
    expect(() =>
      moveTenantData(kit.registry, {
        tenantId: 'acme',
        from,
        to,
        services: ['analytics'],
        switchPlacement: () => {
          throw new Error('crash before the switch')
        },
      }),
    ).toThrow(/crash/)
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
