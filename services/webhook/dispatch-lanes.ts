import { eq } from 'drizzle-orm'
import { webhookDeliveries, webhookEndpoints } from '../../schema/webhook/tables.ts'
import type { BackoffStep } from '../kernel/backoff.ts'
import { sqlNames } from '../kernel/columns.ts'
import { claimDue, nextDueAfter } from './claims.ts'
import type { WebhookDeps } from './deps.ts'
import type { EndpointRow } from './endpoints.ts'
import { type Lane, newLane, tokensOf } from './lanes.ts'
import type { Answered, Finished } from './outcomes.ts'
import type { AttemptOutcome, AttemptResult, ClaimedDelivery, DeliveryRow } from './queue.ts'

/** Sends one attempt; `onAnswer` hears the status line before the body is read. */
export type Send = (
  endpoint: EndpointRow,
  delivery: Pick<DeliveryRow, 'messageId' | 'payload'>,
  nowMs: number,
  onAnswer: (status: number) => void,
) => Promise<AttemptOutcome>

/** A claimed delivery whose request starts once the turn that claimed it committed. */
export interface Launch {
  endpoint: EndpointRow
  lane: Lane
  row: ClaimedDelivery
}

/**
 * What one dispatcher holds in memory, shared by its turn (dispatch-turn.ts) and its lanes (this
 * file): per-endpoint lanes, the endpoint rows it read, the outcomes waiting for the next commit.
 */
export interface DispatchCtx {
  deps: WebhookDeps
  send: Send
  lanes: Map<string, Lane>
  /** Endpoint rows read (null: deleted); forgotten when the endpoint changes. */
  endpoints: Map<string, EndpointRow | null>
  running: Set<Promise<void>>
  state: {
    totalInFlight: number
    stopped: boolean
    /** This dispatcher's hold on the queue file (claims.ts `takeQueue`). */
    owner: string
    turnQueued: boolean
    finished: Finished[]
    answered: Answered[]
    /** Deliveries ended dead this turn because their endpoint is gone or disabled. */
    killed: number
    /** The wait before the next try after failed claims (none after a success). */
    backoff: BackoffStep | undefined
  }
  /** Runs a turn at `at` (clock epoch ms) unless one is due earlier. */
  schedule(at: number): void
  /** Runs a turn at the end of this turn of the event loop (once, however often asked). */
  wake(): void
}

/** Asked on every lane turn (bench/webhook.ts): prepared by hand, names from the table. */
const d = sqlNames(webhookDeliveries)
const NEXT_DUE_SQL = `SELECT MIN(${d.nextAttemptAt}) AS at FROM ${d.$}
  WHERE ${d.endpointId} = ? AND ${d.status} = 'pending'`

// Not those in flight: their outcome, recorded when it comes, says how they ended.
const KILL_ENDPOINT_SQL = `UPDATE ${d.$} SET ${d.status} = 'dead', ${d.lastError} = ?, ${d.updatedAt} = ?
  WHERE ${d.endpointId} = ? AND ${d.status} = 'pending'
  AND rowid NOT IN (SELECT value FROM json_each(?))`

/**
 * An endpoint's row, read once. A change made through this process forgets it at once
 * (`endpointChanged`); one made through another process (a sibling worker, the CLI) empties the
 * cache when the dispatcher's watcher sees the file's data_version move.
 */
export function endpointOf({ ctx, id }: { ctx: DispatchCtx; id: string }): EndpointRow | null {
  if (!ctx.endpoints.has(id)) {
    const row = ctx.deps.db.orm
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, id))
      .get()
    ctx.endpoints.set(id, row ?? null)
  }
  return ctx.endpoints.get(id) ?? null
}

export function laneOf({ ctx, id }: { ctx: DispatchCtx; id: string }): Lane {
  let lane = ctx.lanes.get(id)
  if (!lane) {
    lane = newLane(endpointOf({ ctx, id })?.rateLimit ?? ctx.deps.config.rateLimit)
    ctx.lanes.set(id, lane)
  }
  return lane
}

/** Reads when the endpoint's next pending delivery is due; drops a lane with nothing to do. */
export function refreshDue({ ctx, id }: { ctx: DispatchCtx; id: string }): void {
  const lane = laneOf({ ctx, id })
  lane.nextDue =
    ctx.deps.db.sqlite.query<{ at: number | null }, [string]>(NEXT_DUE_SQL).get(id)?.at ?? null
  if (lane.nextDue === null && lane.inFlight.size === 0) ctx.lanes.delete(id)
}

const isDue = (lane: Lane, nowMs: number) => lane.nextDue !== null && lane.nextDue <= nowMs

/** Whether any lane has a delivery due by `nowMs`. */
export const anyDue = (ctx: DispatchCtx, nowMs: number) =>
  [...ctx.lanes.values()].some((lane) => isDue(lane, nowMs))

/** Ends the pending deliveries of a deleted or disabled endpoint dead (not those in flight). */
function killLane({ ctx, id, endpoint, nowMs }: LaneInput & { endpoint: EndpointRow | null }) {
  const reason = endpoint ? 'endpoint disabled' : 'endpoint deleted'
  const lane = ctx.lanes.get(id)
  const inFlight = JSON.stringify([...(lane?.inFlight ?? [])])
  ctx.state.killed += ctx.deps.db.sqlite
    .query(KILL_ENDPOINT_SQL)
    .run(reason, new Date(nowMs).toISOString(), id, inFlight).changes
  // A lane with claims in flight stays until their outcomes come: they are its only record.
  if (lane?.inFlight.size) lane.nextDue = null
  else ctx.lanes.delete(id)
}

interface LaneInput {
  ctx: DispatchCtx
  id: string
  nowMs: number
}

/** Claims one lane's due deliveries inside the turn's transaction; counts them in flight. */
function claimLane({ ctx, id, nowMs, out }: LaneInput & { out: Launch[] }): void {
  const { deps, state } = ctx
  const endpoint = endpointOf({ ctx, id })
  if (endpoint?.status !== 'enabled') {
    killLane({ ctx, id, endpoint, nowMs })
    return
  }
  const lane = laneOf({ ctx, id })
  const rate = endpoint.rateLimit ?? deps.config.rateLimit
  const room = Math.min(
    deps.config.maxInFlight - lane.inFlight.size,
    deps.config.maxInFlightTotal - state.totalInFlight,
  )
  if (room <= 0) return
  const tokens = tokensOf(lane, rate)
  if (tokens <= 0) {
    ctx.schedule(deps.clock.nowMs() + Math.ceil(1000 / rate))
    return
  }
  const limit = Math.min(room, tokens)
  const rows = claimDue(deps, { endpointId: id, nowMs, limit, inFlight: lane.inFlight })
  lane.tokens -= rows.length
  state.totalInFlight += rows.length
  for (const row of rows) {
    lane.inFlight.add(row.seq)
    out.push({ endpoint, lane, row })
  }
  // A full claim leaves the lane due; a short one means the due rows ran out (the pending rows
  // due by now are all in flight).
  if (rows.length < limit) lane.nextDue = nextDueAfter(deps, id, nowMs)
}

/** Claims for every due lane (inside the turn's transaction). */
export function claimDueLanes({ ctx, nowMs, out }: Omit<LaneInput, 'id'> & { out: Launch[] }) {
  for (const [id, lane] of ctx.lanes) if (isDue(lane, nowMs)) claimLane({ ctx, id, nowMs, out })
}

/** Gives back claims whose turn did not commit: nothing of them was started. */
export function unclaim({ ctx, launches }: { ctx: DispatchCtx; launches: Launch[] }): void {
  for (const { lane, row } of launches) {
    lane.inFlight.delete(row.seq)
    ctx.state.totalInFlight--
  }
  launches.length = 0
}

/** Takes finished attempts off their lanes' in-flight sets (their outcome is being committed). */
export function releaseFinished({ ctx, batch }: { ctx: DispatchCtx; batch: readonly Finished[] }) {
  for (const { endpoint, lane, row } of batch) {
    lane.inFlight.delete(row.seq)
    ctx.state.totalInFlight--
    if (!ctx.lanes.has(endpoint.id)) ctx.lanes.set(endpoint.id, lane)
  }
}

/** A turn for the earliest lane due later. */
export function scheduleLanes({ ctx, nowMs }: { ctx: DispatchCtx; nowMs: number }): void {
  let earliest = Number.POSITIVE_INFINITY
  for (const { nextDue } of ctx.lanes.values())
    if (nextDue !== null && nextDue > nowMs) earliest = Math.min(earliest, nextDue)
  if (earliest < Number.POSITIVE_INFINITY) ctx.schedule(earliest)
}

/** What the committed results change in memory: disabled endpoints, retry times. */
export function noteResults({
  ctx,
  batch,
  results,
}: {
  ctx: DispatchCtx
  batch: readonly Finished[]
  results: readonly AttemptResult[]
}): void {
  results.forEach((result, i) => {
    const { endpoint, lane } = batch[i]!
    if (result.disabled) ctx.endpoints.delete(endpoint.id)
    if (result.nextAttemptAt !== null) {
      if (lane.nextDue === null || result.nextAttemptAt < lane.nextDue)
        lane.nextDue = result.nextAttemptAt
      ctx.schedule(result.nextAttemptAt)
    }
  })
}
