import { exponentialBackoff, nextWait } from '../kernel/backoff.ts'
import { faultPoint } from '../kernel/faults.ts'
import { attemptDelivery } from './attempt.ts'
import { holdsQueue } from './claims.ts'
import type { WebhookDeps } from './deps.ts'
import {
  anyDue,
  claimDueLanes,
  type DispatchCtx,
  type Launch,
  noteResults,
  releaseFinished,
  type Send,
  scheduleLanes,
  unclaim,
} from './dispatch-lanes.ts'
import { signingKeys } from './endpoint-secrets.ts'
import { deliveriesTotal, inFlightGauge } from './metrics.ts'
import { countFinished, recordFinished } from './outcomes.ts'
import type { AttemptOutcome, AttemptResult } from './queue.ts'

/** A real attempt: signed with the endpoint's keys, through the SSRF-checked client. */
export const sendSigned =
  (deps: WebhookDeps): Send =>
  (endpoint, delivery, nowMs, onAnswer) =>
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
    })

/** A failed claim is retried later, 1 s doubling to 30 s, and logged. */
const CLAIM_BACKOFF = exponentialBackoff({ initialMs: 1000, maxMs: 30_000 })

export function backOff({ ctx, err }: { ctx: DispatchCtx; err: unknown }): void {
  ctx.state.backoff = nextWait(CLAIM_BACKOFF, ctx.state.backoff)
  const retryMs = ctx.state.backoff.duration
  ctx.deps.log.error('webhook dispatch failed; retrying', {
    error: (err as Error)?.message,
    retry_ms: retryMs,
  })
  ctx.schedule(ctx.deps.clock.nowMs() + retryMs)
}

/** Another dispatcher started on this file and took the queue over: claim nothing more. */
function yieldQueue(ctx: DispatchCtx): void {
  ctx.state.stopped = true
  ctx.deps.log.warn('another webhook dispatcher took this queue over; this one stops claiming')
}

/** Claims in a savepoint of the turn's transaction: a claim that fails keeps the outcomes. */
function claimInSavepoint({ ctx, nowMs, out }: { ctx: DispatchCtx; nowMs: number; out: Launch[] }) {
  const { deps, state } = ctx
  try {
    deps.db.write(() =>
      holdsQueue(deps, state.owner) ? claimDueLanes({ ctx, nowMs, out }) : yieldQueue(ctx),
    )
    state.backoff = undefined
  } catch (err) {
    unclaim({ ctx, launches: out })
    state.killed = 0
    backOff({ ctx, err })
  }
}

/**
 * One turn, one transaction: the outcomes and 2xx answers that arrived since the last turn, then
 * the claims for every lane with room (in a savepoint, so a failed claim keeps the outcomes).
 * If the commit fails, the outcomes stay uncommitted (their deliveries stay pending and are sent
 * again) and nothing claimed is started. Never throws: it runs from timers.
 */
export function runTurn(ctx: DispatchCtx): void {
  const { deps, state } = ctx
  state.turnQueued = false
  const batch = state.finished
  const marks = state.answered
  state.finished = []
  state.answered = []
  releaseFinished({ ctx, batch })
  const launches: Launch[] = []
  let results: AttemptResult[] = []
  state.killed = 0
  try {
    if (deps.db.closed) return
    const nowMs = deps.clock.nowMs()
    const due = !state.stopped && anyDue(ctx, nowMs)
    if (batch.length || marks.length)
      deps.db.write(() => {
        results = recordFinished(deps, batch, marks)
        noteResults({ ctx, batch, results })
        if (due) claimInSavepoint({ ctx, nowMs, out: launches })
      })
    else if (due) claimInSavepoint({ ctx, nowMs, out: launches })
    if (!state.stopped) scheduleLanes({ ctx, nowMs })
  } catch (err) {
    unclaim({ ctx, launches })
    deps.log.error('could not record webhook attempts', {
      deliveries: batch.map((f) => f.row.id),
      delivered: marks.map((m) => m.id),
      error: (err as Error).message,
    })
    if (!state.stopped) backOff({ ctx, err })
    return
  } finally {
    inFlightGauge.set(state.totalInFlight)
  }
  countFinished(batch, results)
  if (state.killed) deliveriesTotal.inc({ status: 'dead' }, state.killed)
  for (const l of launches) launchAttempt({ ctx, launch: l })
}

/** Starts one claimed attempt; its outcome (and an early 2xx) waits for the next turn. */
function launchAttempt({ ctx, launch }: { ctx: DispatchCtx; launch: Launch }): void {
  const { deps, state } = ctx
  const { endpoint, lane, row } = launch
  const p = (async () => {
    let outcome: AttemptOutcome
    try {
      outcome = await ctx.send(endpoint, row, deps.clock.nowMs(), (status) => {
        if (status >= 200 && status < 300 && !deps.db.closed) {
          // The receiver has it; a crash before this commit sends it again with the same id.
          faultPoint('webhook.after_send')
          state.answered.push({ id: row.id, statusCode: status, atMs: deps.clock.nowMs() })
          ctx.wake()
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
    state.finished.push({ endpoint, lane, row, outcome })
    ctx.wake()
  })()
  ctx.running.add(p)
  void p.finally(() => ctx.running.delete(p))
}
