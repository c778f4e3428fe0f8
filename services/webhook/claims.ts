import { webhookDeliveries } from '../../schema/webhook/tables.ts'
import { selectList } from '../kernel/columns.ts'
import type { WebhookDeps } from './deps.ts'
import { CLAIMED_COLUMNS, type ClaimedDelivery } from './queue.ts'

/**
 * Claims live in the dispatcher's memory: a claimed delivery stays `pending` in its row until its
 * outcome is committed, so claiming writes nothing. After a crash every delivery whose outcome was
 * not committed is due again and is sent again; a committed 2xx never is. Only one dispatcher may
 * claim from a file (the one started last, see `takeQueue`), or two would send the same rows.
 */

/** Rowids of the due rows, oldest first: the endpoint index alone answers it, without a sort. */
const DUE_SQL = `SELECT rowid AS seq FROM webhook_deliveries
  WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?
  ORDER BY next_attempt_at, rowid LIMIT ?`

const ROW_SQL = `SELECT rowid AS seq, ${selectList(webhookDeliveries, CLAIMED_COLUMNS)}
  FROM webhook_deliveries WHERE rowid = ?`

/**
 * Up to `limit` due deliveries of one endpoint, oldest first, leaving out those in flight
 * (`inFlight`: their rowids). Only the rows handed out are read whole.
 */
export function claimDue(
  deps: WebhookDeps,
  input: {
    endpointId: string
    nowMs: number
    limit: number
    inFlight?: ReadonlySet<number>
  },
): ClaimedDelivery[] {
  const { endpointId, nowMs, limit, inFlight = new Set<number>() } = input
  const due = deps.db.sqlite
    .query<{ seq: number }, [string, number, number]>(DUE_SQL)
    .all(endpointId, nowMs, limit + inFlight.size)
  const row = deps.db.sqlite.query<ClaimedDelivery, [number]>(ROW_SQL)
  const claimed: ClaimedDelivery[] = []
  for (const { seq } of due) {
    if (claimed.length === limit) break
    if (inFlight.has(seq)) continue
    const delivery = row.get(seq)
    if (delivery) claimed.push(delivery)
  }
  return claimed
}

/**
 * When the endpoint's next pending delivery falls due, looking past `nowMs`: the ones due by
 * then are all claimed or in flight when a claim came back short.
 */
export function nextDueAfter(deps: WebhookDeps, endpointId: string, nowMs: number): number | null {
  return (
    deps.db.sqlite
      .query<{ at: number | null }, [string, number]>(
        "SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at > ?",
      )
      .get(endpointId, nowMs)?.at ?? null
  )
}

/** Makes the calling dispatcher the one that claims from this file; returns its token. */
export function takeQueue(deps: WebhookDeps): string {
  const owner = crypto.randomUUID()
  deps.db.write(() =>
    deps.db.sqlite
      .query(
        `INSERT INTO webhook_dispatcher (id, owner, started_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, started_at = excluded.started_at`,
      )
      .run(owner, deps.clock.now().toISOString()),
  )
  return owner
}

/**
 * Whether `owner` still claims from this file. Asked inside the write transaction that claims: a
 * dispatcher that takes the queue over is seen by every later turn. It sends again what this one
 * had in flight when it started, as a restart after a crash would.
 */
export function holdsQueue(deps: WebhookDeps, owner: string): boolean {
  return (
    deps.db.sqlite
      .query<{ owner: string }, []>('SELECT owner FROM webhook_dispatcher WHERE id = 1')
      .get()?.owner === owner
  )
}
