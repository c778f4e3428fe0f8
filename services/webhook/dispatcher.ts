import { takeQueue } from './claims.ts'
import type { WebhookDeps } from './deps.ts'
import { type DispatchCtx, endpointOf, refreshDue, type Send } from './dispatch-lanes.ts'
import { runTurn, sendSigned } from './dispatch-turn.ts'
import { burstOf } from './lanes.ts'
import { deadGauge, pendingGauge } from './metrics.ts'
import { countQueue, pendingEndpoints, purgeDelivered, recoverInFlight } from './queue-wide.ts'
import { watchOtherWriters } from './watch.ts'

/**
 * The delivery worker. The queue lives in SQLite; memory holds per-endpoint lanes (the claims in
 * flight, token bucket, next due time) recomputed from indexed queries (dispatch-lanes.ts). Work
 * goes in turns (dispatch-turn.ts): one write transaction per turn of the event loop commits every
 * outcome and 2xx that arrived since the last one and claims the due deliveries of every lane with
 * room (in memory: a claim writes nothing, see claims.ts); the claimed requests start after that
 * commit. After a crash only deliveries whose outcome was not committed are sent again, and a
 * committed 2xx never is.
 */
export function createDispatcher(deps: WebhookDeps, opts: { send?: Send } = {}) {
  const timers = {
    turn: null as ReturnType<typeof setTimeout> | null,
    turnAt: Number.POSITIVE_INFINITY,
    sweeper: null as ReturnType<typeof setInterval> | null,
    watcher: null as ReturnType<typeof setInterval> | null,
    sweeps: 0,
  }
  const ctx: DispatchCtx = {
    deps,
    send: opts.send ?? sendSigned(deps),
    lanes: new Map(),
    endpoints: new Map(),
    running: new Set(),
    state: {
      totalInFlight: 0,
      stopped: true,
      owner: '',
      turnQueued: false,
      finished: [],
      answered: [],
      killed: 0,
      backoff: undefined,
    },
    schedule(at) {
      if (ctx.state.stopped || at >= timers.turnAt) return
      if (timers.turn) clearTimeout(timers.turn)
      timers.turnAt = at
      timers.turn = setTimeout(
        () => {
          timers.turn = null
          timers.turnAt = Number.POSITIVE_INFINITY
          runTurn(ctx)
        },
        Math.max(0, at - deps.clock.nowMs()),
      )
    },
    wake() {
      if (ctx.state.turnQueued) return
      ctx.state.turnQueued = true
      setImmediate(() => runTurn(ctx))
    },
  }

  /** Rebuilds every lane from the table (start, and a slow safety sweep). */
  const sweep = () => {
    if (deps.db.closed) return
    if (timers.sweeps++ % 60 === 0) purgeDelivered(deps)
    for (const id of pendingEndpoints(deps)) refreshDue({ ctx, id })
    const { pending, dead } = countQueue(deps)
    pendingGauge.set(pending)
    deadGauge.set(dead)
    ctx.wake()
  }
  const safeSweep = () => {
    try {
      sweep()
    } catch (err) {
      deps.log.error('webhook sweep failed; the next sweep retries', {
        error: (err as Error)?.message,
      })
    }
  }

  return {
    start() {
      ctx.state.stopped = false
      ctx.state.owner = takeQueue(deps)
      const recovered = recoverInFlight(deps)
      if (recovered)
        deps.log.info('re-queued webhook deliveries that were in flight', { count: recovered })
      sweep()
      timers.sweeper = setInterval(safeSweep, 5000)
      timers.sweeper.unref?.()
      // Deliveries enqueued and endpoints changed by another process (a sibling worker serving a
      // trigger, a replay or an edit; the CLI) are seen within 200 ms rather than at the next
      // sweep.
      timers.watcher = watchOtherWriters(deps.db, 200, () => {
        ctx.endpoints.clear()
        safeSweep()
      })
    },
    /** New or replayed deliveries for these endpoints. */
    enqueued(endpointIds: Iterable<string>) {
      for (const id of endpointIds) refreshDue({ ctx, id })
      ctx.wake()
    },
    endpointChanged(endpointId: string) {
      ctx.endpoints.delete(endpointId)
      const lane = ctx.lanes.get(endpointId)
      const rate = endpointOf({ ctx, id: endpointId })?.rateLimit
      if (lane && rate) lane.tokens = Math.min(lane.tokens, burstOf(rate))
      refreshDue({ ctx, id: endpointId })
      ctx.wake()
    },
    /** Stops taking new work and waits (bounded) for attempts in flight to be recorded. */
    async stop(waitMs = 5000) {
      ctx.state.stopped = true
      if (timers.turn) clearTimeout(timers.turn)
      if (timers.sweeper) clearInterval(timers.sweeper)
      if (timers.watcher) clearInterval(timers.watcher)
      await Promise.race([Promise.all(ctx.running), Bun.sleep(waitMs)])
      runTurn(ctx)
    },
    get inFlight() {
      return ctx.state.totalInFlight
    },
  }
}

export type Dispatcher = ReturnType<typeof createDispatcher>
