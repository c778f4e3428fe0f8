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
const QUEUED_ENDPOINTS = `WITH RECURSIVE queued(id) AS (
    SELECT MIN(endpoint_id) FROM webhook_deliveries
    UNION ALL
    SELECT (SELECT MIN(endpoint_id) FROM webhook_deliveries WHERE endpoint_id > queued.id)
    FROM queued WHERE queued.id IS NOT NULL)`

/** Every queue-wide statement, by name (the tests check that none of them scans the table). */
export const QUEUE_WIDE_SQL = {
  pendingEndpoints: `${QUEUED_ENDPOINTS} SELECT id FROM queued WHERE id IS NOT NULL AND EXISTS
    (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = queued.id AND status = 'pending')`,
  counts: `${QUEUED_ENDPOINTS} SELECT d.status, COUNT(*) AS n FROM queued JOIN webhook_deliveries d
    ON d.endpoint_id = queued.id AND d.status IN ('pending', 'dead') GROUP BY d.status`,
  expired: `${QUEUED_ENDPOINTS} SELECT d.id FROM queued JOIN webhook_deliveries d
    ON d.endpoint_id = queued.id AND d.status = 'delivered' AND d.next_attempt_at < ? LIMIT 2000`,
  recover: `${QUEUED_ENDPOINTS} UPDATE webhook_deliveries
    SET status = 'pending', next_attempt_at = MIN(next_attempt_at, ?)
    WHERE endpoint_id IN (SELECT id FROM queued) AND status = 'delivering'`,
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
    const n = deps.db.write(() => {
      const ids = expired.all(cutoff).map((r) => r.id)
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
  return deps.db.write(() => deps.db.sqlite.query(QUEUE_WIDE_SQL.recover).run(nowMs).changes)
}
