import { type ServiceContext, type ServiceName, serviceNames } from '../kernel/context.ts'
import { invalidField } from '../kernel/errors.ts'
import { faultPoint } from '../kernel/faults.ts'
import { HANDOFF_PATHS } from '../kernel/handoff-routes.ts'
import type { Actor } from '../kernel/roles.ts'
import { ownerOf } from '../kernel/tenant-owner.ts'
import { finishHandoff, startHandoff } from './instance-journal.ts'
import type { InstanceMove } from './model.ts'
import { instancesOf } from './profile.ts'
import { saveRow, tenantInPath } from './store.ts'
import { oneAtATime } from './upgrade.ts'

/** How long a move waits for the broker to take the tenant's change before it goes on. */
const FLUSH_WAIT_MS = 5_000

/** Events older than this before a move began are not replayed to the tenant's new instance. */
const REPLAY_MARGIN_MS = 10 * 60_000

/**
 * Moves one tenant of a service that runs as several instances to the instance `to` (DESIGN §12,
 * `mmp tenant move --to`), reads working meanwhile:
 * 1. the new instance pulls the tenant's files from the old one, which fences the tenant's writes
 *    (503 with Retry-After) and sets its events aside from then on;
 * 2. the tenant's record names the new instance (`instances`), announced by `tenants.changed`, so
 *    the gateway and every part route the tenant there;
 * 3. the old instance erases its copy;
 * 4. every part publishes again the tenant's events since shortly before the move: the new
 *    instance applies those the old one set aside and drops the rest (its inbox came along).
 * A failure before step 2 leaves the tenant where it was: the old instance drops its fences and
 * gets the events it set aside replayed. Running the command again finishes a failed move.
 * The route is the operator's; `actor.token` is what the instances are called with.
 */
export async function moveTenantToInstance(
  ctx: ServiceContext,
  actor: Actor,
  tenantId: string,
  body: { service: string; instance: string },
): Promise<InstanceMove> {
  const service = body.service as ServiceName
  const list = (serviceNames as readonly string[]).includes(service)
    ? (ctx.client.instances?.(service) ?? [])
    : []
  if (list.length < 2)
    throw invalidField('service', `${body.service} does not run as several instances here`)
  const to = body.instance.replace(/\/+$/, '')
  if (!list.includes(to))
    throw invalidField('instance', `${body.instance} is not one of ${list.join(', ')}`)
  const id = tenantInPath(ctx, actor, tenantId).id
  // One at a time with the tenant's plan changes: a tier move beside the handoff would move files
  // the new instance is copying.
  return oneAtATime(ctx, id, async () => {
    const row = tenantInPath(ctx, actor, id)
    const from = ownerOf(row.id, list, instancesOf(row)[service])
    const base = { tenant_id: row.id, service, from, to }
    if (from === to) return { ...base, moved: false, rows: 0, replayed: 0 }

    const call = { token: actor.token, method: 'POST' as const }
    const since = new Date(Date.now() - REPLAY_MARGIN_MS).toISOString()
    // Journalled: a tenant service that dies from here on finishes the move at its next start.
    const journal = startHandoff(ctx, { tenantId: row.id, service, from, to })
    const started = performance.now()
    ctx.log.info('moving a tenant to another instance', base)
    let rows: number
    try {
      const pulled = await ctx.client.call<{ rows: number }>(service, HANDOFF_PATHS.pull, {
        ...call,
        instance: to,
        body: { tenant: row.id, from },
      })
      rows = pulled.rows
      ctx.log.info('the new instance pulled the tenant', {
        ...base,
        rows,
        ms: Math.round(performance.now() - started),
      })
    } catch (err) {
      ctx.log.warn('the new instance could not pull the tenant; the old one keeps it', {
        ...base,
        error: (err as Error).message,
        ms: Math.round(performance.now() - started),
      })
      // Nothing switched: the old instance serves the tenant again and gets its events back.
      const released = await ctx.client
        .call(service, HANDOFF_PATHS.release, { ...call, instance: from, body: { tenant: row.id } })
        .then(
          () => true,
          () => false,
        )
      await replayEverywhere(ctx, call, row.id, since)
      // Not released: the next start asks again rather than leaving the tenant fenced.
      if (released) finishHandoff(ctx, journal, 'failed')
      throw err
    }
    // Pulled, not yet recorded: the tenant service dies with the tenant fenced on the old one.
    faultPoint('tenant.handoff.after_pull')
    // Read again: a name or settings change made while the files were copied stays.
    const now = tenantInPath(ctx, actor, id)
    saveRow(
      ctx,
      { ...now, instances: JSON.stringify({ ...instancesOf(now), [service]: to }) },
      'updated',
    )
    // The parts learn the new instance from `tenants.changed`: published before the old instance lets
    // go, so few requests meet it after. A broker that does not acknowledge within FLUSH_WAIT_MS
    // does not hold the move: the event stays in the outbox and goes out when it does.
    const flushed = await Promise.race([
      ctx.relay.flush().then(() => true),
      Bun.sleep(FLUSH_WAIT_MS).then(() => false),
    ])
    if (!flushed)
      ctx.log.warn('the tenant’s new instance is not announced yet; the move goes on', {
        ...base,
        waited_ms: FLUSH_WAIT_MS,
      })
    await ctx.client.call(service, HANDOFF_PATHS.release, {
      ...call,
      instance: from,
      body: { tenant: row.id, to },
    })
    ctx.log.info('the old instance let the tenant go', {
      ...base,
      ms: Math.round(performance.now() - started),
    })
    const replayed = await replayEverywhere(ctx, call, row.id, since)
    finishHandoff(ctx, journal, 'done')
    ctx.log.info('tenant moved to another instance', {
      ...base,
      rows,
      replayed,
      ms: Math.round(performance.now() - started),
    })
    return { ...base, moved: true, rows, replayed }
  })
}

/**
 * Asks every part to publish the tenant's events since `since` again; returns how many went. As
 * the operator (`token`) or, at start, as the platform (`headers`).
 */
export async function replayEverywhere(
  ctx: ServiceContext,
  as: { token?: string; headers?: Record<string, string> },
  tenantId: string,
  since: string,
): Promise<number> {
  let n = 0
  for (const service of serviceNames) {
    if (!(ctx.client.instances?.(service)?.length ?? 0)) continue
    try {
      const res = await ctx.client.call<{ republished: number }>(service, HANDOFF_PATHS.replay, {
        method: 'POST',
        ...(as.token ? { token: as.token } : {}),
        ...(as.headers ? { headers: as.headers } : {}),
        tenant: tenantId,
        body: { tenant: tenantId, since },
      })
      n += res.republished
    } catch (err) {
      ctx.log.warn('a part could not replay a moved tenant’s events', {
        service,
        tenant_id: tenantId,
        error: (err as Error).message,
      })
    }
  }
  return n
}
