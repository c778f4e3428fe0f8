import { webhookDeliveries, webhookDispatcher } from '../../schema/webhook/tables.ts'
import { excluded, selectList, sqlNames } from '../kernel/columns.ts'
import type { WebhookDeps } from './deps.ts'
import { CLAIMED_COLUMNS, type ClaimedDelivery } from './queue.ts'

/**
 * Claims live in the dispatcher's memory: a claimed delivery stays `pending` in its row until its
 * outcome is committed, so claiming writes nothing. After a crash every delivery whose outcome was
 * not committed is due again and is sent again; a committed 2xx never is. Only one dispatcher may
 * claim from a file (the one started last, see `takeQueue`), or two would send the same rows.
 */

/** The claims' statements run on every dispatcher turn (bench/webhook.ts): names from the tables. */
const d = sqlNames(webhookDeliveries)
const q = sqlNames(webhookDispatcher)

/** Rowids of the due rows, oldest first: the endpoint index alone answers it, without a sort. */
const DUE_SQL = `SELECT rowid AS seq FROM ${d.$}
  WHERE ${d.endpointId} = ? AND ${d.status} = 'pending' AND ${d.nextAttemptAt} <= ?
  ORDER BY ${d.nextAttemptAt}, rowid LIMIT ?`

const ROW_SQL = `SELECT rowid AS seq, ${selectList(webhookDeliveries, CLAIMED_COLUMNS)}
  FROM ${d.$} WHERE rowid = ?`

const NEXT_DUE_AFTER_SQL = `SELECT MIN(${d.nextAttemptAt}) AS at FROM ${d.$}
  WHERE ${d.endpointId} = ? AND ${d.status} = 'pending' AND ${d.nextAttemptAt} > ?`

/** Asked inside every claiming write (`holdsQueue`): a prepared statement. */
const OWNER_SQL = `SELECT ${selectList(webhookDispatcher, ['owner'])} FROM ${q.$} WHERE ${q.id} = 1`

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
      .query<{ at: number | null }, [string, number]>(NEXT_DUE_AFTER_SQL)
      .get(endpointId, nowMs)?.at ?? null
  )
}

/** Makes the calling dispatcher the one that claims from this file; returns its token. */
export function takeQueue(deps: WebhookDeps): string {
  const owner = crypto.randomUUID()
  const t = webhookDispatcher
  deps.db.write((orm) =>
    orm
      .insert(t)
      .values({ id: 1, owner, startedAt: deps.clock.now().toISOString() })
      .onConflictDoUpdate({
        target: t.id,
        set: { owner: excluded(t.owner), startedAt: excluded(t.startedAt) },
      })
      .run(),
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
    deps.db.sqlite.query<Pick<typeof webhookDispatcher.$inferSelect, 'owner'>, []>(OWNER_SQL).get()
      ?.owner === owner
  )
}
