import { and, eq, lte } from 'drizzle-orm'
import { tenantMoves } from '../../schema/tenant/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { newId } from '../kernel/ids.ts'
import { tenantDb } from './store.ts'

/**
 * A move of a tenant between instances (instance-move.ts) is journalled in `tenant_moves` beside
 * the tier moves, with its own state: `handoff` while under way, then `done` or `failed`. Its
 * placements are `{service, instance}`.
 */
export const UNDER_WAY = 'handoff'

interface Handoff {
  tenantId: string
  service: string
  from: string
  to: string
}

/** Records a move between instances as under way; returns its id. */
export function startHandoff(ctx: ServiceContext, move: Handoff): string {
  const id = newId('req')
  tenantDb(ctx).write((orm) =>
    orm
      .insert(tenantMoves)
      .values({
        id,
        tenantId: move.tenantId,
        fromPlacement: JSON.stringify({ service: move.service, instance: move.from }),
        toPlacement: JSON.stringify({ service: move.service, instance: move.to }),
        state: UNDER_WAY,
        startedAt: ctx.clock.now().toISOString(),
      })
      .run(),
  )
  return id
}

/**
 * Records how a move between instances ended. Earlier moves of the tenant off the same instance
 * still journalled as under way (their old instance could not be told: it was down) end with it:
 * this one's release covered them, so a later start has nothing of theirs to finish or replay.
 */
export function finishHandoff(ctx: ServiceContext, id: string, state: 'done' | 'failed'): void {
  tenantDb(ctx).write((orm) => {
    const move = orm.select().from(tenantMoves).where(eq(tenantMoves.id, id)).get()
    if (!move) return
    const finishedAt = ctx.clock.now().toISOString()
    orm
      .update(tenantMoves)
      .set({ state, finishedAt })
      .where(
        and(
          eq(tenantMoves.state, UNDER_WAY),
          eq(tenantMoves.tenantId, move.tenantId),
          eq(tenantMoves.fromPlacement, move.fromPlacement),
          lte(tenantMoves.startedAt, move.startedAt),
        ),
      )
      .run()
  })
}
