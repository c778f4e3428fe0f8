import { eq } from 'drizzle-orm'
import { isPlanId } from '../../schema/plans.ts'
import { tenantMoves } from '../../schema/tenant/tables.ts'
import { purgeTenantRows, settleMoveLeftovers } from '../../tenants/move.ts'
import type { Placement } from '../../tenants/registry.ts'
import { type ServiceContext, serviceNames } from '../kernel/context.ts'
import { sameFolder } from './plan.ts'
import { planLease } from './plan-lease.ts'
import { findTenant, parseJson } from './profile.ts'
import { saveRow, tenantDb } from './store.ts'

/**
 * Finishes moves a crash interrupted: the move's change capture and staging files are cleared;
 * when the placement already switched, the rows left in the old databases are purged and the
 * tenant row catches up; otherwise the old placement stands and partial copies in the new
 * databases are purged.
 */
export function resumeMoves(ctx: ServiceContext): number {
  const db = tenantDb(ctx)
  const pending = db.orm.select().from(tenantMoves).where(eq(tenantMoves.state, 'moving')).all()
  let resumed = 0
  for (const m of pending) {
    // Another worker's move in progress holds the tenant's plan lease: it is not interrupted.
    const lease = planLease(ctx, m.tenantId)
    if (lease && !lease.tryAcquire()) {
      lease.close()
      continue
    }
    try {
      resumeMove(ctx, m)
      resumed++
    } finally {
      lease?.release()
      lease?.close()
    }
  }
  return resumed
}

function resumeMove(ctx: ServiceContext, m: typeof tenantMoves.$inferSelect): void {
  const db = tenantDb(ctx)
  const from = parseJson<Placement>(m.fromPlacement, { isolation: 'shared' })
  const to = parseJson<
    Placement & { plan_terms?: string | null; plan_revision?: number | undefined }
  >(m.toPlacement, { isolation: 'shared' })
  const now = ctx.registry.placement(m.tenantId)
  const switched =
    now.isolation === to.isolation && (now.database_path ?? null) === (to.database_path ?? null)
  const same = sameFolder(ctx, from, to, m.tenantId)
  if (!same) {
    settleMoveLeftovers(ctx.registry, {
      tenantId: m.tenantId,
      from,
      to,
      services: serviceNames,
    })
  }
  if (switched) {
    if (!same) {
      purgeTenantRows(ctx.registry, {
        tenantId: m.tenantId,
        placement: from,
        services: serviceNames,
      })
    }
    const row = findTenant(db, m.tenantId)
    if (row && to.plan) {
      const next = {
        ...row,
        plan: to.plan,
        planTerms: isPlanId(to.plan) ? null : (to.plan_terms ?? row.planTerms),
        planRevision: Math.max(row.planRevision, to.plan_revision ?? 0),
        isolation: to.isolation,
        databasePath: to.database_path ?? null,
      }
      saveRow(ctx, next, 'updated')
    }
  } else if (!same) {
    // The old placement stands; copies that reached the new databases are cleared so no row
    // exists twice (the next attempt clears them too).
    purgeTenantRows(ctx.registry, { tenantId: m.tenantId, placement: to, services: serviceNames })
  }
  db.write((orm) =>
    orm
      .update(tenantMoves)
      .set({ state: switched ? 'done' : 'failed', finishedAt: ctx.clock.now().toISOString() })
      .where(eq(tenantMoves.id, m.id))
      .run(),
  )
  ctx.log.warn('finished an interrupted tenant move', { tenant_id: m.tenantId, switched })
}
