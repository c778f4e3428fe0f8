import { desc, eq } from 'drizzle-orm'
import { tenantMoves, tenants } from '../../schema/tenant/tables.ts'
import type { ServiceContext, ServiceName } from '../kernel/context.ts'
import { PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { HANDOFF_PATHS } from '../kernel/handoff-routes.ts'
import { retryUntilDone } from '../kernel/retry.ts'
import { PLATFORM_SYNC } from '../kernel/tokens.ts'
import { finishHandoff, UNDER_WAY } from './instance-journal.ts'
import { replayEverywhere } from './instance-move.ts'
import { instancesOf } from './profile.ts'
import { tenantDb } from './store.ts'
import { oneAtATime } from './upgrade.ts'

/** Events this long before a move began are replayed when it is finished at start. */
const REPLAY_MARGIN_MS = 10 * 60_000

/**
 * Finishes the moves between instances that a stop of the tenant service cut short, so no tenant
 * stays fenced on its old instance (up to `HANDOFF_FENCE_S`). Whether the tenant's record already
 * names the new instance decides: named, the old instance erases its copy; not named, the old
 * instance drops its fences and serves the tenant again, and the new one erases what it may have
 * pulled. Either way every part replays the
 * tenant's events since shortly before the move. The other parts may still be starting: each
 * move is tried until it goes through or `stopped()`. Asked as the platform (the hop key).
 */
export async function resumeHandoffs(
  ctx: ServiceContext,
  opts: { stopped: () => boolean; retryMs?: number },
): Promise<number> {
  const pending = tenantDb(ctx)
    .orm.select()
    .from(tenantMoves)
    .where(eq(tenantMoves.state, UNDER_WAY))
    // Newest first: its end also ends the earlier moves off the same instance (instance-journal.ts).
    .orderBy(desc(tenantMoves.startedAt))
    .all()
  const as = { headers: { [PURPOSE_HEADER]: PLATFORM_SYNC } }
  let finished = 0
  for (const m of pending) {
    const from = JSON.parse(m.fromPlacement) as { service: ServiceName; instance: string }
    const to = JSON.parse(m.toPlacement) as { instance: string }
    const done = await retryUntilDone(
      () =>
        oneAtATime(ctx, m.tenantId, async () => {
          // Ended meanwhile, by a later move of the tenant or another worker's start.
          if (!underWay(ctx, m.id)) return
          const row = tenantDb(ctx)
            .orm.select()
            .from(tenants)
            .where(eq(tenants.id, m.tenantId))
            .get()
          const switched = row !== undefined && instancesOf(row)[from.service] === to.instance
          const release = (instance: string, body: { tenant: string; to?: string }) =>
            ctx.client.call(from.service, HANDOFF_PATHS.release, {
              method: 'POST',
              instance,
              ...as,
              body,
            })
          if (switched) await release(from.instance, { tenant: m.tenantId, to: to.instance })
          else {
            await release(from.instance, { tenant: m.tenantId })
            // What the new instance may have pulled goes, and it knows the tenant is not its own.
            await release(to.instance, { tenant: m.tenantId, to: from.instance })
          }
          const since = new Date(Date.parse(m.startedAt) - REPLAY_MARGIN_MS).toISOString()
          if (row) await replayEverywhere(ctx, as, m.tenantId, since)
          finishHandoff(ctx, m.id, switched ? 'done' : 'failed')
          ctx.log.info('a move between instances cut short was finished', {
            tenant_id: m.tenantId,
            service: from.service,
            moved: switched,
          })
        }),
      {
        waiting: 'waiting for the old instance to finish a move between instances',
        log: ctx.log,
        logEvery: 30,
        stopped: opts.stopped,
        everyMs: opts.retryMs ?? 1000,
        fields: { tenant_id: m.tenantId },
      },
    )
    if (!done) return finished
    finished++
  }
  return finished
}

const underWay = (ctx: ServiceContext, id: string) =>
  tenantDb(ctx)
    .orm.select({ state: tenantMoves.state })
    .from(tenantMoves)
    .where(eq(tenantMoves.id, id))
    .get()?.state === UNDER_WAY
