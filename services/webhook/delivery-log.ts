import { and, desc, eq, inArray, lt, type SQL } from 'drizzle-orm'
import {
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '../../schema/webhook/tables.ts'
import { Conflict, invalidField, NotFound } from '../kernel/errors.ts'
import type { WebhookDeps } from './deps.ts'
import { type Delivery, deliveryStatuses, isWebhookEvent, webhookEvents } from './model.ts'
import type { DeliveryRow } from './queue.ts'

/** The delivery log (every attempt of every delivery) and replays. */
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
    last_attempt_at: attempts.at(-1)?.at ?? null,
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
      throw invalidField('status', `must be one of: ${deliveryStatuses.join(', ')}`)
    where.push(eq(webhookDeliveries.status, status))
  }
  if (q.endpoint_id) where.push(eq(webhookDeliveries.endpointId, q.endpoint_id))
  if (q.event) {
    if (!isWebhookEvent(q.event))
      throw invalidField('event', `must be one of: ${webhookEvents.join(', ')}`)
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

/** A replayed delivery's row: pending again now, with a fresh retry schedule. */
const requeued = (nowMs: number) => ({
  status: 'pending',
  attempts: 0,
  nextAttemptAt: nowMs,
  updatedAt: new Date(nowMs).toISOString(),
  deliveredAt: null,
})

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
  deps.db.write((orm) =>
    orm
      .update(webhookDeliveries)
      .set(requeued(deps.clock.nowMs()))
      .where(eq(webhookDeliveries.id, row.id))
      .run(),
  )
  deps.notify.enqueued([row.endpointId])
  return getDelivery(deps, tenantId, id)
}

/**
 * Replays every dead delivery of a tenant (null: all tenants) or one endpoint, whose endpoint is
 * enabled. Goes endpoint by endpoint through the endpoint index: dead rows are few among many.
 */
export function replayDead(
  deps: WebhookDeps,
  tenantId: string | null,
  endpointId?: string,
): { replayed: number } {
  const enabled = deps.db.orm
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.status, 'enabled'),
        tenantId === null ? undefined : eq(webhookEndpoints.tenantId, tenantId),
        endpointId ? eq(webhookEndpoints.id, endpointId) : undefined,
      ),
    )
    .all()
  const set = requeued(deps.clock.nowMs())
  const touched: string[] = []
  let replayed = 0
  deps.db.write((orm) => {
    for (const { id } of enabled) {
      const n = orm
        .update(webhookDeliveries)
        .set(set)
        .where(
          and(
            eq(webhookDeliveries.endpointId, id),
            eq(webhookDeliveries.status, 'dead'),
            tenantId === null ? undefined : eq(webhookDeliveries.tenantId, tenantId),
          ),
        )
        .returning({ id: webhookDeliveries.id })
        .all().length
      if (n) touched.push(id)
      replayed += n
    }
  })
  deps.notify.enqueued(touched)
  return { replayed }
}
