import { and, desc, eq, inArray, lt, type SQL } from 'drizzle-orm'
import {
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '../../schema/webhook/tables.ts'
import { Conflict, invalidField, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import type { WebhookDeps } from './deps.ts'
import { type Delivery, deliveryStatuses, isWebhookEvent, type WebhookEvent } from './model.ts'

export type DeliveryRow = typeof webhookDeliveries.$inferSelect

/** The body an endpoint receives: SPEC envelope plus `id` and the endpoint's pinned `version`. */
export function renderPayload(
  msgId: string,
  event: WebhookEvent,
  version: number,
  timestamp: string,
  data: Record<string, unknown>,
): string {
  // v1 is the only version: later versions transform `data` here, keyed by `version`.
  return JSON.stringify({ id: msgId, event, version, timestamp, data })
}

/**
 * Queues one message for every enabled endpoint of the tenant subscribed to the event. Call inside
 * a `db.write` (or it opens one). Returns the delivery ids and the endpoints that got work.
 */
export function enqueueEvent(
  deps: WebhookDeps,
  tenantId: string,
  event: WebhookEvent,
  data: Record<string, unknown>,
  occurredAt?: string,
): { messageId: string; deliveries: string[]; endpoints: string[] } {
  const endpoints = deps.db.sqlite
    .query<{ id: string; events: string; version: number }, [string]>(
      "SELECT id, events, version FROM webhook_endpoints WHERE tenant_id = ? AND status = 'enabled'",
    )
    .all(tenantId)
    .filter((e) => (JSON.parse(e.events) as string[]).includes(event))
  const messageId = newId('msg')
  const nowMs = deps.clock.nowMs()
  const now = new Date(nowMs).toISOString()
  const timestamp = occurredAt ?? now
  const first = nowMs + jittered(deps.config.retrySchedule[0] ?? 0)
  const insert = deps.db.sqlite.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload, status,
       attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  )
  const ids: string[] = []
  deps.db.write(() => {
    for (const e of endpoints) {
      const id = newId('del')
      insert.run(
        id,
        tenantId,
        e.id,
        messageId,
        event,
        renderPayload(messageId, event, e.version, timestamp, data),
        first,
        now,
        now,
      )
      ids.push(id)
    }
  })
  return { messageId, deliveries: ids, endpoints: endpoints.map((e) => e.id) }
}

/** A delay with up to +10% jitter, so retries of many deliveries do not arrive in lockstep. */
export function jittered(ms: number): number {
  return ms <= 0 ? 0 : Math.round(ms * (1 + Math.random() * 0.1))
}

export interface AttemptOutcome {
  at: string
  statusCode: number | null
  latencyMs: number
  responseExcerpt: string | null
  error: string | null
  ok: boolean
}

export type AttemptResult = {
  status: 'delivered' | 'pending' | 'dead'
  nextAttemptAt: number | null
  disabled: boolean
}
type AttemptedDelivery = Pick<DeliveryRow, 'id' | 'tenantId' | 'endpointId' | 'attempts'>

/**
 * Records attempts and decides what comes next, all in one transaction: delivered; retried per
 * the schedule; dead after the last attempt; dead with the endpoint disabled on 410 Gone.
 * Batching many outcomes into one commit is what keeps the durable queue fast (DESIGN §14).
 */
export function recordAttempts(
  deps: WebhookDeps,
  items: ReadonlyArray<{ delivery: AttemptedDelivery; outcome: AttemptOutcome }>,
): AttemptResult[] {
  const insert = deps.db.sqlite.query(
    `INSERT INTO webhook_attempts (delivery_id, tenant_id, at, status_code, latency_ms,
       response_excerpt, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  const update = deps.db.sqlite.query(
    `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
       last_status_code = ?, last_error = ?, updated_at = ?, delivered_at = ? WHERE id = ?`,
  )
  const disable = deps.db.sqlite.query(
    "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ?",
  )
  const schedule = deps.config.retrySchedule
  const nowMs = deps.clock.nowMs()
  const now = new Date(nowMs).toISOString()
  return deps.db.write(() =>
    items.map(({ delivery, outcome }) => {
      const attempts = delivery.attempts + 1
      let status: AttemptResult['status']
      let next: number | null = null
      const gone = outcome.statusCode === 410
      if (outcome.ok) status = 'delivered'
      else if (gone || attempts >= schedule.length) status = 'dead'
      else {
        status = 'pending'
        next = nowMs + jittered(schedule[attempts] ?? 0)
      }
      const error = gone ? 'the endpoint answered 410 Gone and was disabled' : outcome.error
      insert.run(
        delivery.id,
        delivery.tenantId,
        outcome.at,
        outcome.statusCode,
        outcome.latencyMs,
        outcome.responseExcerpt,
        error,
      )
      update.run(
        status,
        attempts,
        next ?? nowMs,
        outcome.statusCode,
        error,
        now,
        status === 'delivered' ? now : null,
        delivery.id,
      )
      if (gone) disable.run('the endpoint answered 410 Gone', now, delivery.endpointId)
      return { status, nextAttemptAt: next, disabled: gone }
    }),
  )
}

/** Delivered deliveries (and their attempts) are kept for this long; dead ones until replayed. */
export const DELIVERED_RETENTION_MS = 30 * 86_400_000

/** Drops delivered deliveries older than the retention, in bounded batches. */
export function purgeDelivered(deps: WebhookDeps, retentionMs = DELIVERED_RETENTION_MS): number {
  const cutoff = deps.clock.nowMs() - retentionMs
  let total = 0
  for (let i = 0; i < 20; i++) {
    const n = deps.db.write(() => {
      const ids = deps.db.sqlite
        .query<{ id: string }, [number]>(
          "SELECT id FROM webhook_deliveries WHERE status = 'delivered' AND next_attempt_at < ? LIMIT 2000",
        )
        .all(cutoff)
        .map((r) => r.id)
      if (ids.length === 0) return 0
      const marks = ids.map(() => '?').join(',')
      deps.db.sqlite
        .query(`DELETE FROM webhook_attempts WHERE delivery_id IN (${marks})`)
        .run(...ids)
      deps.db.sqlite.query(`DELETE FROM webhook_deliveries WHERE id IN (${marks})`).run(...ids)
      return ids.length
    })
    total += n
    if (n < 2000) break
  }
  return total
}

/** After a crash: deliveries that were in flight go back to pending, due now. */
export function recoverInFlight(deps: WebhookDeps): number {
  const nowMs = deps.clock.nowMs()
  return deps.db.write(
    () =>
      deps.db.sqlite
        .query(
          "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = MIN(next_attempt_at, ?) WHERE status = 'delivering'",
        )
        .run(nowMs).changes,
  )
}

const statusAliases: Record<string, string> = {
  success: 'delivered',
  succeeded: 'delivered',
  failed: 'dead',
  fail: 'dead',
  sending: 'delivering',
}

function attemptsOf(deps: WebhookDeps, ids: string[]) {
  const byDelivery = new Map<string, Delivery['attempts']>()
  if (ids.length === 0) return byDelivery
  const rows = deps.db.orm
    .select()
    .from(webhookAttempts)
    .where(inArray(webhookAttempts.deliveryId, ids))
    .orderBy(webhookAttempts.seq)
    .all()
  for (const r of rows) {
    const list = byDelivery.get(r.deliveryId) ?? []
    list.push({
      at: r.at,
      status_code: r.statusCode,
      latency_ms: r.latencyMs,
      response_excerpt: r.responseExcerpt,
      error: r.error,
    })
    byDelivery.set(r.deliveryId, list)
  }
  return byDelivery
}

function deliveryView(row: DeliveryRow, attempts: Delivery['attempts']): Delivery {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    endpoint_id: row.endpointId,
    message_id: row.messageId,
    event: row.event,
    status: row.status,
    attempt_count: row.attempts,
    next_attempt_at: row.status === 'pending' ? new Date(row.nextAttemptAt).toISOString() : null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    delivered_at: row.deliveredAt,
    payload: JSON.parse(row.payload),
    attempts,
  }
}

/** Newest first; `tenantId` null lists every tenant (platform operator). */
export function listDeliveries(
  deps: WebhookDeps,
  tenantId: string | null,
  q: {
    status?: string | undefined
    endpoint_id?: string | undefined
    event?: string | undefined
    limit?: number | undefined
    cursor?: string | undefined
  },
) {
  const where: SQL[] = []
  if (tenantId !== null) where.push(eq(webhookDeliveries.tenantId, tenantId))
  if (q.status) {
    const status = statusAliases[q.status] ?? q.status
    if (!(deliveryStatuses as readonly string[]).includes(status))
      throw invalidField('status', `must be one of ${deliveryStatuses.join(', ')}`)
    where.push(eq(webhookDeliveries.status, status))
  }
  if (q.endpoint_id) where.push(eq(webhookDeliveries.endpointId, q.endpoint_id))
  if (q.event) {
    if (!isWebhookEvent(q.event)) throw invalidField('event', 'is not a webhook event')
    where.push(eq(webhookDeliveries.event, q.event))
  }
  if (q.cursor) where.push(lt(webhookDeliveries.id, q.cursor))
  const limit = q.limit ?? 50
  const rows = deps.db.orm
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.id))
    .limit(limit + 1)
    .all()
  const more = rows.length > limit
  const page = rows.slice(0, limit)
  const attempts = attemptsOf(
    deps,
    page.map((r) => r.id),
  )
  const data = page.map((r) => deliveryView(r, attempts.get(r.id) ?? []))
  return { data, next_cursor: more ? data[data.length - 1]!.id : null, has_more: more }
}

function deliveryRow(deps: WebhookDeps, tenantId: string | null, id: string): DeliveryRow {
  const row = deps.db.orm
    .select()
    .from(webhookDeliveries)
    .where(
      tenantId === null
        ? eq(webhookDeliveries.id, id)
        : and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.tenantId, tenantId)),
    )
    .get()
  if (!row) throw new NotFound('webhook delivery', id)
  return row
}

export function getDelivery(deps: WebhookDeps, tenantId: string | null, id: string): Delivery {
  const row = deliveryRow(deps, tenantId, id)
  return deliveryView(row, attemptsOf(deps, [row.id]).get(row.id) ?? [])
}

/**
 * Sends a delivered or dead delivery again with the same message id and body, with a fresh
 * retry schedule. The endpoint must still exist and be enabled.
 */
export function replayDelivery(deps: WebhookDeps, tenantId: string | null, id: string): Delivery {
  const row = deliveryRow(deps, tenantId, id)
  if (row.status === 'pending' || row.status === 'delivering')
    throw new Conflict(`delivery ${id} is already ${row.status}`)
  const endpoint = deps.db.orm
    .select({ status: webhookEndpoints.status })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, row.endpointId))
    .get()
  if (!endpoint) throw new Conflict(`the endpoint of delivery ${id} was deleted`)
  if (endpoint.status !== 'enabled')
    throw new Conflict(`the endpoint ${row.endpointId} is disabled; enable it before replaying`)
  const nowMs = deps.clock.nowMs()
  deps.db.write(() =>
    deps.db.sqlite
      .query(
        "UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?, delivered_at = NULL WHERE id = ?",
      )
      .run(nowMs, new Date(nowMs).toISOString(), row.id),
  )
  deps.notify.enqueued([row.endpointId])
  return getDelivery(deps, tenantId, id)
}

/** Replays every dead delivery of a tenant (null: all tenants) or one endpoint, whose endpoint is enabled. */
export function replayDead(
  deps: WebhookDeps,
  tenantId: string | null,
  endpointId?: string,
): { replayed: number } {
  const nowMs = deps.clock.nowMs()
  const params: Array<string | number> = [nowMs, new Date(nowMs).toISOString()]
  let filter = ''
  if (tenantId !== null) {
    filter += ' AND d.tenant_id = ?'
    params.push(tenantId)
  }
  if (endpointId) {
    filter += ' AND d.endpoint_id = ?'
    params.push(endpointId)
  }
  const endpoints = deps.db.sqlite
    .query<{ endpoint_id: string }, Array<string | number>>(
      `SELECT DISTINCT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'dead'${filter}`,
    )
    .all(...params.slice(2))
  const replayed = deps.db.write(
    () =>
      deps.db.sqlite
        .query(
          `UPDATE webhook_deliveries AS d SET status = 'pending', attempts = 0, next_attempt_at = ?,
             updated_at = ?, delivered_at = NULL
           WHERE d.status = 'dead'${filter} AND EXISTS (SELECT 1 FROM webhook_endpoints e
             WHERE e.id = d.endpoint_id AND e.status = 'enabled')`,
        )
        .run(...params).changes,
  )
  deps.notify.enqueued(endpoints.map((e) => e.endpoint_id))
  return { replayed }
}
