import type { WebhookDeps } from './deps.ts'
import type { EndpointRow } from './endpoints.ts'
import type { Lane } from './lanes.ts'
import { attemptSeconds, attemptsTotal, deliveriesTotal } from './metrics.ts'
import {
  type AttemptOutcome,
  type AttemptResult,
  type ClaimedDelivery,
  markDelivered,
  recordAttempts,
} from './queue.ts'

/** An attempt whose outcome arrived and waits for the dispatcher's next commit. */
export interface Finished {
  endpoint: EndpointRow
  lane: Lane
  row: ClaimedDelivery
  outcome: AttemptOutcome
}

/** A 2xx status line that arrived before its attempt finished reading the answer. */
export interface Answered {
  id: string
  statusCode: number
  /** Epoch ms: formatted only for the few marks written, nearly all come with their outcome. */
  atMs: number
}

/**
 * Records one turn's outcomes and early 2xx answers; call inside the turn's `db.write`. A 2xx
 * whose outcome is in the same batch needs no mark of its own: the outcome records it delivered.
 */
export function recordFinished(
  deps: WebhookDeps,
  batch: readonly Finished[],
  answered: readonly Answered[],
): AttemptResult[] {
  if (batch.length === 0 && answered.length === 0) return []
  const recorded = new Set(batch.map((f) => f.row.id))
  markDelivered(
    deps,
    answered
      .filter((m) => !recorded.has(m.id))
      .map(({ id, statusCode, atMs }) => ({ id, statusCode, at: new Date(atMs).toISOString() })),
  )
  return recordAttempts(
    deps,
    batch.map((f) => ({ delivery: f.row, outcome: f.outcome })),
  )
}

/** Counts committed outcomes: one counter increment per label and batch, not per delivery. */
export function countFinished(batch: readonly Finished[], results: readonly AttemptResult[]) {
  let ok = 0
  const final = { delivered: 0, dead: 0 }
  results.forEach((result, i) => {
    const { outcome } = batch[i]!
    if (outcome.ok) ok++
    attemptSeconds.observe(outcome.latencyMs / 1000)
    if (result.status !== 'pending') final[result.status]++
  })
  if (ok) attemptsTotal.inc({ result: 'success' }, ok)
  if (results.length > ok) attemptsTotal.inc({ result: 'failure' }, results.length - ok)
  for (const [status, n] of Object.entries(final)) if (n) deliveriesTotal.inc({ status }, n)
}
