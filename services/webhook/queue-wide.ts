import { inArray } from 'drizzle-orm'
import { webhookAttempts, webhookDeliveries } from '../../schema/webhook/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { WebhookDeps } from './deps.ts'

/**
 * The questions about the whole queue (which endpoints have due work, how much is pending or
 * dead, what is past the retention, what was in flight at a crash). No index serves them
 * directly: they go through the endpoint index one endpoint at a time, which costs a seek per
 * endpoint here instead of a second index written on every status change of every delivery.
 */

/**
 * The endpoint ids that have deliveries, one seek of the endpoint index each (a skip scan).
 * Prefix a statement with it and read `queued(id)`; its last row is a NULL id.
 */
const d = sqlNames(webhookDeliveries)
const QUEUED_ENDPOINTS = `WITH RECURSIVE queued(id) AS (
    SELECT MIN(${d.endpointId}) FROM ${d.$}
    UNION ALL
    SELECT (SELECT MIN(${d.endpointId}) FROM ${d.$} WHERE ${d.endpointId} > queued.id)
    FROM queued WHERE queued.id IS NOT NULL)`

/** Every queue-wide statement, by name (the tests check that none of them scans the table). */
export const QUEUE_WIDE_SQL = {
  pendingEndpoints: `${QUEUED_ENDPOINTS} SELECT id FROM queued WHERE id IS NOT NULL AND EXISTS
    (SELECT 1 FROM ${d.$} WHERE ${d.endpointId} = queued.id AND ${d.status} = 'pending')`,
  counts: `${QUEUED_ENDPOINTS} SELECT d.${d.status} AS status, COUNT(*) AS n FROM queued
    JOIN ${d.$} d ON d.${d.endpointId} = queued.id AND d.${d.status} IN ('pending', 'dead')
    GROUP BY d.${d.status}`,
  expired: `${QUEUED_ENDPOINTS} SELECT d.${d.id} AS id FROM queued JOIN ${d.$} d
    ON d.${d.endpointId} = queued.id AND d.${d.status} = 'delivered' AND d.${d.nextAttemptAt} < ?
    LIMIT 2000`,
  recover: `${QUEUED_ENDPOINTS} UPDATE ${d.$}
    SET ${d.status} = 'pending', ${d.nextAttemptAt} = MIN(${d.nextAttemptAt}, ?)
    WHERE ${d.endpointId} IN (SELECT id FROM queued) AND ${d.status} = 'delivering'`,
} as const

/** The endpoints with pending deliveries (due now or later). */
export function pendingEndpoints(deps: WebhookDeps): string[] {
  return deps.db.sqlite
    .query<{ id: string }, []>(QUEUE_WIDE_SQL.pendingEndpoints)
    .all()
    .map((r) => r.id)
}

/** How many deliveries are pending and dead, over every endpoint. */
export function countQueue(deps: WebhookDeps): { pending: number; dead: number } {
  const counts = { pending: 0, dead: 0 }
  for (const { status, n } of deps.db.sqlite
    .query<{ status: 'pending' | 'dead'; n: number }, []>(QUEUE_WIDE_SQL.counts)
    .all())
    counts[status] = n
  return counts
}

/** Delivered deliveries (and their attempts) are kept for this long; dead ones until replayed. */
export const DELIVERED_RETENTION_MS = 30 * 86_400_000

/** Drops delivered deliveries older than the retention, in bounded batches. */
export function purgeDelivered(deps: WebhookDeps, retentionMs = DELIVERED_RETENTION_MS): number {
  const cutoff = deps.clock.nowMs() - retentionMs
  const expired = deps.db.sqlite.query<{ id: string }, [number]>(QUEUE_WIDE_SQL.expired)
  let total = 0
  for (let i = 0; i < 20; i++) {
    const n = deps.db.write((orm) => {
      const ids = expired.all(cutoff).map((r) => r.id)
      if (ids.length === 0) return 0
      orm.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, ids)).run()
      orm.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, ids)).run()
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
  return deps.db.write(() => deps.db.sqlite.query(QUEUE_WIDE_SQL.recover).run(nowMs).changes)
}
