import { faultPoint } from '../kernel/faults.ts'
import { attemptDelivery } from './attempt.ts'
import { claimDue, holdsQueue, nextDueAfter, takeQueue } from './claims.ts'
import type { WebhookDeps } from './deps.ts'
import { type EndpointRow, signingKeys } from './endpoints.ts'
import { burstOf, type Lane, newLane, tokensOf } from './lanes.ts'
import { deadGauge, deliveriesTotal, inFlightGauge, pendingGauge } from './metrics.ts'
import { type Answered, countFinished, type Finished, recordFinished } from './outcomes.ts'
import type { AttemptOutcome, AttemptResult, ClaimedDelivery, DeliveryRow } from './queue.ts'
import { countQueue, pendingEndpoints, purgeDelivered, recoverInFlight } from './queue-wide.ts'
import { watchOtherWriters } from './watch.ts'

type Send = (
  endpoint: EndpointRow,
  delivery: Pick<DeliveryRow, 'messageId' | 'payload'>,
  nowMs: number,
  onAnswer: (status: number) => void,
) => Promise<AttemptOutcome>

/**
 * The delivery worker. The queue lives in SQLite; memory holds per-endpoint lanes (the claims in
 * flight, token bucket, next due time) recomputed from indexed queries. Work goes in turns: one
 * write transaction per turn of the event loop commits every outcome and 2xx that arrived since
 * the last one and claims the due deliveries of every lane with room (in memory: a claim writes
 * nothing, see claims.ts); the claimed requests start after that commit. After a crash only
 * deliveries whose outcome was not committed are sent again, and a committed 2xx never is.
 */
export function createDispatcher(deps: WebhookDeps, opts: { send?: Send } = {}) {
  const lanes = new Map<string, Lane>()
  const endpoints = new Map<string, EndpointRow | null>()
  const running = new Set<Promise<void>>()
  let totalInFlight = 0
  let stopped = true
  /** This dispatcher's hold on the queue file (claims.ts `takeQueue`). */
  let owner = ''
  let timer: ReturnType<typeof setTimeout> | null = null
  let timerAt = Number.POSITIVE_INFINITY
  let turnQueued = false
  let finished: Finished[] = []
  let answered: Answered[] = []
  let sweeper: ReturnType<typeof setInterval> | null = null
  let watcher: ReturnType<typeof setInterval> | null = null

  const send: Send =
    opts.send ??
    ((endpoint, delivery, nowMs, onAnswer) =>
      attemptDelivery({
        onAnswer,
        url: endpoint.url,
        messageId: delivery.messageId,
        body: delivery.payload,
        keys: signingKeys(endpoint, nowMs, deps.secrets),
        timeoutMs: deps.config.timeoutMs,
        policy: deps.config,
        resolve: deps.resolve,
        nowMs,
      }))

  const q = {
    nextDue: deps.db.sqlite.query<{ at: number | null }, [string]>(
      "SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending'",
    ),
    // Not those in flight: their outcome, recorded when it comes, says how they ended.
    killEndpoint: deps.db.sqlite.query(
      `UPDATE webhook_deliveries SET status = 'dead', last_error = ?, updated_at = ?
       WHERE endpoint_id = ? AND status = 'pending' AND rowid NOT IN (SELECT value FROM json_each(?))`,
    ),
    endpoint: deps.db.sqlite.query<EndpointRow & Record<string, unknown>, [string]>(
      `SELECT id, tenant_id AS tenantId, url, events, secret, previous_secret AS previousSecret,
         previous_secret_expires_at AS previousSecretExpiresAt, version, rate_limit AS rateLimit,
         status, disabled_reason AS disabledReason, created_at AS createdAt, updated_at AS updatedAt
       FROM webhook_endpoints WHERE id = ?`,
    ),
  }

  /**
   * A change made through this process forgets its row at once (`endpointChanged`); one made
   * through another process (a sibling worker, the CLI) empties the cache when the watcher below
   * sees the file's data_version move.
   */
  const endpointOf = (id: string): EndpointRow | null => {
    if (!endpoints.has(id)) endpoints.set(id, (q.endpoint.get(id) as EndpointRow | null) ?? null)
    return endpoints.get(id) ?? null
  }

  const laneOf = (id: string): Lane => {
    let lane = lanes.get(id)
    if (!lane) {
      lane = newLane(endpointOf(id)?.rateLimit ?? deps.config.rateLimit)
      lanes.set(id, lane)
    }
    return lane
  }

  const refreshDue = (id: string) => {
    const lane = laneOf(id)
    lane.nextDue = q.nextDue.get(id)?.at ?? null
    if (lane.nextDue === null && lane.inFlight.size === 0) lanes.delete(id)
  }

  /** Runs a turn at `at` (clock epoch ms) unless one is due earlier. */
  const schedule = (at: number) => {
    if (stopped || at >= timerAt) return
    if (timer) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(
      () => {
        timer = null
        timerAt = Number.POSITIVE_INFINITY
        turn()
      },
      Math.max(0, at - deps.clock.nowMs()),
    )
  }

  /** Runs a turn at the end of this turn of the event loop (once, however often asked). */
  const wake = () => {
    if (turnQueued) return
    turnQueued = true
    setImmediate(turn)
  }

  interface Launch {
    endpoint: EndpointRow
    lane: Lane
    row: ClaimedDelivery
  }
  let killed = 0

  /** Claims one lane's due deliveries inside the turn's transaction; counts them in flight. */
  const pump = (id: string, nowMs: number, out: Launch[]) => {
    const endpoint = endpointOf(id)
    if (endpoint?.status !== 'enabled') {
      const reason = endpoint ? 'endpoint disabled' : 'endpoint deleted'
      const lane = lanes.get(id)
      const inFlight = JSON.stringify([...(lane?.inFlight ?? [])])
      killed += q.killEndpoint.run(reason, new Date(nowMs).toISOString(), id, inFlight).changes
      // A lane with claims in flight stays until their outcomes come: they are its only record.
      if (lane?.inFlight.size) lane.nextDue = null
      else lanes.delete(id)
      return
    }
    const lane = laneOf(id)
    const rate = endpoint.rateLimit ?? deps.config.rateLimit
    const room = Math.min(
      deps.config.maxInFlight - lane.inFlight.size,
      deps.config.maxInFlightTotal - totalInFlight,
    )
    if (room <= 0) return
    const tokens = tokensOf(lane, rate)
    if (tokens <= 0) {
      schedule(deps.clock.nowMs() + Math.ceil(1000 / rate))
      return
    }
    const limit = Math.min(room, tokens)
    const rows = claimDue(deps, id, nowMs, limit, lane.inFlight)
    lane.tokens -= rows.length
    totalInFlight += rows.length
    for (const row of rows) {
      lane.inFlight.add(row.seq)
      out.push({ endpoint, lane, row })
    }
    // A full claim leaves the lane due; a short one means the due rows ran out (the pending rows
    // due by now are all in flight).
    if (rows.length < limit) lane.nextDue = nextDueAfter(deps, id, nowMs)
  }

  const isDue = (lane: Lane, nowMs: number) => lane.nextDue !== null && lane.nextDue <= nowMs

  /** Claims for every due lane (inside the turn's transaction). */
  const claimAll = (nowMs: number, out: Launch[]) => {
    for (const [id, lane] of lanes) if (isDue(lane, nowMs)) pump(id, nowMs, out)
  }

  /** Another dispatcher started on this file and took the queue over: claim nothing more. */
  const yieldQueue = () => {
    stopped = true
    deps.log.warn('another webhook dispatcher took this queue over; this one stops claiming')
  }

  /** A turn for the earliest lane due later. */
  const scheduleLanes = (nowMs: number) => {
    let earliest = Number.POSITIVE_INFINITY
    for (const { nextDue } of lanes.values())
      if (nextDue !== null && nextDue > nowMs) earliest = Math.min(earliest, nextDue)
    if (earliest < Number.POSITIVE_INFINITY) schedule(earliest)
  }

  /** What the committed results change in memory: disabled endpoints, retry times. */
  const noteResults = (batch: readonly Finished[], results: readonly AttemptResult[]) => {
    results.forEach((result, i) => {
      const { endpoint, lane } = batch[i]!
      if (result.disabled) endpoints.delete(endpoint.id)
      if (result.nextAttemptAt !== null) {
        if (lane.nextDue === null || result.nextAttemptAt < lane.nextDue)
          lane.nextDue = result.nextAttemptAt
        schedule(result.nextAttemptAt)
      }
    })
  }

  let failures = 0
  /** A failed claim is retried later, 1 s doubling to 30 s, and logged. */
  const backOff = (err: unknown) => {
    failures++
    const retryMs = Math.min(30_000, 1000 * 2 ** (failures - 1))
    deps.log.error('webhook dispatch failed; retrying', {
      error: (err as Error)?.message,
      retry_ms: retryMs,
    })
    schedule(deps.clock.nowMs() + retryMs)
  }

  /**
   * One turn, one transaction: the outcomes and 2xx answers that arrived since the last turn, then
   * the claims for every lane with room (in a savepoint, so a failed claim keeps the outcomes).
   * If the commit fails, the outcomes stay uncommitted (their deliveries stay pending and are sent
   * again) and nothing claimed is started. Never throws: it runs from timers.
   */
  const turn = () => {
    turnQueued = false
    const batch = finished
    const marks = answered
    finished = []
    answered = []
    for (const { endpoint, lane, row } of batch) {
      lane.inFlight.delete(row.seq)
      totalInFlight--
      if (!lanes.has(endpoint.id)) lanes.set(endpoint.id, lane)
    }
    const launches: Launch[] = []
    let results: AttemptResult[] = []
    killed = 0
    try {
      if (deps.db.closed) return
      const nowMs = deps.clock.nowMs()
      const due = !stopped && [...lanes.values()].some((lane) => isDue(lane, nowMs))
      // A savepoint: a claim that fails keeps the outcomes recorded before it.
      const claim = () => {
        try {
          deps.db.write(() => (holdsQueue(deps, owner) ? claimAll(nowMs, launches) : yieldQueue()))
          failures = 0
        } catch (err) {
          unclaim(launches)
          killed = 0
          backOff(err)
        }
      }
      if (batch.length || marks.length)
        deps.db.write(() => {
          results = recordFinished(deps, batch, marks)
          noteResults(batch, results)
          if (due) claim()
        })
      else if (due) claim()
      if (!stopped) scheduleLanes(nowMs)
    } catch (err) {
      unclaim(launches)
      deps.log.error('could not record webhook attempts', {
        deliveries: batch.map((f) => f.row.id),
        delivered: marks.map((m) => m.id),
        error: (err as Error).message,
      })
      if (!stopped) backOff(err)
      return
    } finally {
      inFlightGauge.set(totalInFlight)
    }
    countFinished(batch, results)
    if (killed) deliveriesTotal.inc({ status: 'dead' }, killed)
    for (const l of launches) launch(l)
  }

  const unclaim = (launches: Launch[]) => {
    for (const { lane, row } of launches) {
      lane.inFlight.delete(row.seq)
      totalInFlight--
    }
    launches.length = 0
  }

  const launch = ({ endpoint, lane, row }: Launch) => {
    const p = (async () => {
      let outcome: AttemptOutcome
      try {
        outcome = await send(endpoint, row, deps.clock.nowMs(), (status) => {
          if (status >= 200 && status < 300 && !deps.db.closed) {
            // The receiver has it; a crash before this commit sends it again with the same id.
            faultPoint('webhook.after_send')
            answered.push({ id: row.id, statusCode: status, atMs: deps.clock.nowMs() })
            wake()
          }
        })
      } catch (err) {
        outcome = {
          at: deps.clock.now().toISOString(),
          statusCode: null,
          latencyMs: 0,
          responseExcerpt: null,
          error: (err as Error).message,
          ok: false,
        }
      }
      finished.push({ endpoint, lane, row, outcome })
      wake()
    })()
    running.add(p)
    void p.finally(() => running.delete(p))
  }

  let sweeps = 0
  /** Rebuilds every lane from the table (start, and a slow safety sweep). */
  const sweep = () => {
    if (deps.db.closed) return
    if (sweeps++ % 60 === 0) purgeDelivered(deps)
    for (const id of pendingEndpoints(deps)) refreshDue(id)
    const { pending, dead } = countQueue(deps)
    pendingGauge.set(pending)
    deadGauge.set(dead)
    wake()
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
      stopped = false
      owner = takeQueue(deps)
      const recovered = recoverInFlight(deps)
      if (recovered)
        deps.log.info('re-queued webhook deliveries that were in flight', { count: recovered })
      sweep()
      sweeper = setInterval(safeSweep, 5000)
      sweeper.unref?.()
      // Deliveries enqueued and endpoints changed by another process (a sibling worker serving a
      // trigger, a replay or an edit; the CLI) are seen within 200 ms rather than at the next
      // sweep.
      watcher = watchOtherWriters(deps.db, 200, () => {
        endpoints.clear()
        safeSweep()
      })
    },
    /** New or replayed deliveries for these endpoints. */
    enqueued(endpointIds: Iterable<string>) {
      for (const id of endpointIds) refreshDue(id)
      wake()
    },
    endpointChanged(endpointId: string) {
      endpoints.delete(endpointId)
      const lane = lanes.get(endpointId)
      const rate = endpointOf(endpointId)?.rateLimit
      if (lane && rate) lane.tokens = Math.min(lane.tokens, burstOf(rate))
      refreshDue(endpointId)
      wake()
    },
    /** Stops taking new work and waits (bounded) for attempts in flight to be recorded. */
    async stop(waitMs = 5000) {
      stopped = true
      if (timer) clearTimeout(timer)
      if (sweeper) clearInterval(sweeper)
      if (watcher) clearInterval(watcher)
      await Promise.race([Promise.all(running), Bun.sleep(waitMs)])
      turn()
    },
    get inFlight() {
      return totalInFlight
    },
  }
}

export type Dispatcher = ReturnType<typeof createDispatcher>
