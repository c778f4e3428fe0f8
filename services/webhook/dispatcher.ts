import { faultPoint } from '../kernel/faults.ts'
import { attemptDelivery } from './attempt.ts'
import type { WebhookDeps } from './deps.ts'
import { type EndpointRow, signingKeys } from './endpoints.ts'
import {
  attemptSeconds,
  attemptsTotal,
  deadGauge,
  deliveriesTotal,
  inFlightGauge,
  pendingGauge,
} from './metrics.ts'
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  claimDue,
  type DeliveryRow,
  markDelivered,
  purgeDelivered,
  recordAttempts,
  recoverInFlight,
} from './queue.ts'

type Send = (
  endpoint: EndpointRow,
  delivery: Pick<DeliveryRow, 'messageId' | 'payload'>,
  nowMs: number,
  onAnswer: (status: number) => void,
) => Promise<AttemptOutcome>

/**
 * Bucket size: 50 ms worth of the rate. A small burst paces deliveries evenly instead of firing a
 * second's worth at once, which is gentler on receivers and keeps few requests in flight.
 */
const burstOf = (rate: number) => Math.max(1, Math.ceil(rate / 20))

interface Lane {
  inFlight: number
  tokens: number
  refilledAt: number
  /** Epoch ms of the earliest pending delivery, or null when none is known. */
  nextDue: number | null
}

/**
 * The delivery worker. The queue lives in SQLite; memory only holds per-endpoint lanes (in-flight
 * count, token bucket, next due time) recomputed from indexed queries. A delivery is marked
 * `delivering` before its request starts and its outcome is committed as soon as the answer
 * arrives, so after a crash only in-flight deliveries are sent again and a 2xx one never is.
 */
export function createDispatcher(deps: WebhookDeps, opts: { send?: Send } = {}) {
  const lanes = new Map<string, Lane>()
  const endpoints = new Map<string, EndpointRow | null>()
  const running = new Set<Promise<void>>()
  let totalInFlight = 0
  let stopped = true
  let timer: ReturnType<typeof setTimeout> | null = null
  let timerAt = Number.POSITIVE_INFINITY
  let tickQueued = false
  let sweeper: ReturnType<typeof setInterval> | null = null
  let watcher: ReturnType<typeof setInterval> | null = null
  /** The queue's data_version when last looked at: it moves when another process writes. */
  let seenVersion = -1

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
    pendingEndpoints: deps.db.sqlite.query<{ endpoint_id: string }, []>(
      "SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE status = 'pending'",
    ),
    killEndpoint: deps.db.sqlite.query(
      "UPDATE webhook_deliveries SET status = 'dead', last_error = ?, updated_at = ? WHERE endpoint_id = ? AND status = 'pending'",
    ),
    endpoint: deps.db.sqlite.query<EndpointRow & Record<string, unknown>, [string]>(
      `SELECT id, tenant_id AS tenantId, url, events, secret, previous_secret AS previousSecret,
         previous_secret_expires_at AS previousSecretExpiresAt, version, rate_limit AS rateLimit,
         status, disabled_reason AS disabledReason, created_at AS createdAt, updated_at AS updatedAt
       FROM webhook_endpoints WHERE id = ?`,
    ),
    counts: deps.db.sqlite.query<{ status: string; n: number }, []>(
      "SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE status IN ('pending', 'dead') GROUP BY status",
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
      const rate = endpointOf(id)?.rateLimit ?? deps.config.rateLimit
      lane = { inFlight: 0, tokens: burstOf(rate), refilledAt: performance.now(), nextDue: null }
      lanes.set(id, lane)
    }
    return lane
  }

  const refreshDue = (id: string) => {
    const lane = laneOf(id)
    lane.nextDue = q.nextDue.get(id)?.at ?? null
    if (lane.nextDue === null && lane.inFlight === 0) lanes.delete(id)
  }

  /** Runs a tick at `at` (clock epoch ms) unless one is due earlier. */
  const schedule = (at: number) => {
    if (stopped || at >= timerAt) return
    if (timer) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(
      () => {
        timer = null
        timerAt = Number.POSITIVE_INFINITY
        safeTick()
      },
      Math.max(0, at - deps.clock.nowMs()),
    )
  }

  const wake = () => {
    if (stopped || tickQueued) return
    tickQueued = true
    setImmediate(() => {
      tickQueued = false
      safeTick()
    })
  }

  /** Tokens available now for an endpoint (token bucket). */
  const tokensOf = (lane: Lane, rate: number) => {
    const now = performance.now()
    lane.tokens = Math.min(burstOf(rate), lane.tokens + ((now - lane.refilledAt) / 1000) * rate)
    lane.refilledAt = now
    return Math.floor(lane.tokens)
  }

  const pump = (id: string, nowMs: number) => {
    const endpoint = endpointOf(id)
    if (endpoint?.status !== 'enabled') {
      const reason = endpoint ? 'endpoint disabled' : 'endpoint deleted'
      const ts = new Date(nowMs).toISOString()
      const killed = deps.db.write(() => q.killEndpoint.run(reason, ts, id).changes)
      if (killed) deliveriesTotal.inc({ status: 'dead' }, killed)
      lanes.delete(id)
      return
    }
    const lane = laneOf(id)
    const rate = endpoint.rateLimit ?? deps.config.rateLimit
    const room = Math.min(
      deps.config.maxInFlight - lane.inFlight,
      deps.config.maxInFlightTotal - totalInFlight,
    )
    if (room <= 0) return
    const tokens = tokensOf(lane, rate)
    if (tokens <= 0) {
      schedule(deps.clock.nowMs() + Math.ceil(1000 / rate))
      return
    }
    const rows = claimDue(deps, id, nowMs, Math.min(room, tokens))
    lane.tokens -= rows.length
    for (const row of rows) launch(endpoint, lane, row)
    refreshDue(id)
  }

  interface Finished {
    endpoint: EndpointRow
    lane: Lane
    row: ClaimedDelivery
    outcome: AttemptOutcome
  }
  let finished: Finished[] = []
  let flushQueued = false
  let answered: Array<{ id: string; statusCode: number; at: string }> = []

  const queueFlush = () => {
    if (flushQueued) return
    flushQueued = true
    setImmediate(flush)
  }

  /**
   * Commits every 2xx and every outcome that arrived in this turn of the event loop in one
   * transaction. A 2xx whose outcome is in the same batch needs no mark of its own: the outcome
   * records it delivered.
   */
  const flush = () => {
    flushQueued = false
    const batch = finished
    const marks = answered
    finished = []
    answered = []
    if (batch.length === 0 && marks.length === 0) return
    try {
      if (deps.db.closed) return
      const recorded = new Set(batch.map((f) => f.row.id))
      const results = deps.db.write(() => {
        markDelivered(
          deps,
          marks.filter((m) => !recorded.has(m.id)),
        )
        return recordAttempts(
          deps,
          batch.map((f) => ({ delivery: f.row, outcome: f.outcome })),
        )
      })
      results.forEach((result, i) => {
        const { endpoint, lane, outcome } = batch[i]!
        attemptsTotal.inc({ result: outcome.ok ? 'success' : 'failure' })
        attemptSeconds.observe(outcome.latencyMs / 1000)
        if (result.status !== 'pending') deliveriesTotal.inc({ status: result.status })
        if (result.disabled) endpoints.delete(endpoint.id)
        if (result.nextAttemptAt !== null) {
          if (lane.nextDue === null || result.nextAttemptAt < lane.nextDue)
            lane.nextDue = result.nextAttemptAt
          schedule(result.nextAttemptAt)
        }
      })
    } catch (err) {
      deps.log.error('could not record webhook attempts', {
        deliveries: batch.map((f) => f.row.id),
        delivered: marks.map((m) => m.id),
        error: (err as Error).message,
      })
    } finally {
      for (const { endpoint, lane } of batch) {
        lane.inFlight--
        totalInFlight--
        if (!lanes.has(endpoint.id)) lanes.set(endpoint.id, lane)
      }
      inFlightGauge.set(totalInFlight)
      wake()
    }
  }

  const launch = (endpoint: EndpointRow, lane: Lane, row: ClaimedDelivery) => {
    lane.inFlight++
    totalInFlight++
    const p = (async () => {
      let outcome: AttemptOutcome
      try {
        outcome = await send(endpoint, row, deps.clock.nowMs(), (status) => {
          if (status >= 200 && status < 300 && !deps.db.closed) {
            // The receiver has it; a crash before this commit sends it again with the same id.
            faultPoint('webhook.after_send')
            answered.push({ id: row.id, statusCode: status, at: deps.clock.now().toISOString() })
            queueFlush()
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
      queueFlush()
    })()
    running.add(p)
    void p.finally(() => running.delete(p))
  }

  const tick = () => {
    if (stopped || deps.db.closed) return
    const nowMs = deps.clock.nowMs()
    let earliest = Number.POSITIVE_INFINITY
    for (const [id, lane] of lanes) {
      if (lane.nextDue !== null && lane.nextDue <= nowMs) pump(id, nowMs)
      const l = lanes.get(id)
      if (l?.nextDue != null && l.nextDue > nowMs) earliest = Math.min(earliest, l.nextDue)
    }
    if (earliest < Number.POSITIVE_INFINITY) schedule(earliest)
  }

  let failures = 0
  /**
   * A tick that fails (the database is unavailable) is logged and tried again later, 1 s doubling
   * to 30 s: a timer callback that throws would end the process (DESIGN §15).
   */
  const safeTick = () => {
    try {
      tick()
      failures = 0
    } catch (err) {
      failures++
      const retryMs = Math.min(30_000, 1000 * 2 ** (failures - 1))
      deps.log.error('webhook dispatch failed; retrying', {
        error: (err as Error)?.message,
        retry_ms: retryMs,
      })
      schedule(deps.clock.nowMs() + retryMs)
    }
  }

  let sweeps = 0
  /** Rebuilds every lane from the table (start, and a slow safety sweep). */
  const sweep = () => {
    if (deps.db.closed) return
    if (sweeps++ % 60 === 0) purgeDelivered(deps)
    for (const { endpoint_id } of q.pendingEndpoints.all()) refreshDue(endpoint_id)
    for (const { status, n } of q.counts.all())
      (status === 'dead' ? deadGauge : pendingGauge).set(n)
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
      const recovered = recoverInFlight(deps)
      if (recovered)
        deps.log.info('re-queued webhook deliveries that were in flight', { count: recovered })
      sweep()
      sweeper = setInterval(safeSweep, 5000)
      sweeper.unref?.()
      // Deliveries enqueued and endpoints changed by another process (a sibling worker serving a
      // trigger, a replay or an edit; the CLI) are seen within 200 ms rather than at the next
      // sweep.
      watcher = setInterval(() => {
        if (deps.db.closed) return
        try {
          const v = deps.db.sqlite
            .query<{ data_version: number }, []>('PRAGMA data_version')
            .get()!.data_version
          if (v !== seenVersion && seenVersion !== -1) {
            endpoints.clear()
            safeSweep()
          }
          seenVersion = v
        } catch {
          // A file busy or released for a moment: the 5 s sweep still finds the work.
        }
      }, 200)
      watcher.unref?.()
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
      flush()
    },
    get inFlight() {
      return totalInFlight
    },
  }
}

export type Dispatcher = ReturnType<typeof createDispatcher>
