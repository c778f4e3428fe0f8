import { and, eq } from 'drizzle-orm'
import {
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
} from '../../schema/webhook/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import { derivedId, newId } from '../kernel/ids.ts'
import type { WebhookDeps } from './deps.ts'
import type { DeliveryStatus, WebhookEvent } from './model.ts'

/** The durable delivery queue: enqueue, attempt outcomes, crash recovery, retention. */

export type DeliveryRow = typeof webhookDeliveries.$inferSelect

/**
 * The statements of every delivery (enqueue, attempt, outcome; bench/webhook.ts measures them) are
 * prepared by hand, each name taken from the tables.
 */
const d = sqlNames(webhookDeliveries)
const att = sqlNames(webhookAttempts)
const ep = sqlNames(webhookEndpoints)
const ENQUEUE_SQL = `INSERT INTO ${d.$} (${d.id}, ${d.tenantId}, ${d.endpointId}, ${d.messageId},
    ${d.event}, ${d.payload}, ${d.status}, ${d.attempts}, ${d.nextAttemptAt}, ${d.createdAt},
    ${d.updatedAt}) VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`
const ATTEMPT_SQL = `INSERT INTO ${att.$} (${att.deliveryId}, ${att.tenantId}, ${att.at}, ${att.statusCode},
    ${att.latencyMs}, ${att.responseExcerpt}, ${att.error}) VALUES (?, ?, ?, ?, ?, ?, ?)`
const OUTCOME_SQL = `UPDATE ${d.$} SET ${d.status} = ?, ${d.attempts} = ?, ${d.nextAttemptAt} = ?,
    ${d.lastStatusCode} = ?, ${d.lastError} = ?, ${d.updatedAt} = ?, ${d.deliveredAt} = ?`
const DISABLE_SQL = `UPDATE ${ep.$} SET ${ep.status} = 'disabled', ${ep.disabledReason} = ?,
    ${ep.updatedAt} = ? WHERE ${ep.id} = ?`
const DELIVERED_SQL = `UPDATE ${d.$} SET ${d.status} = 'delivered', ${d.lastStatusCode} = ?,
    ${d.lastError} = NULL, ${d.updatedAt} = ?, ${d.deliveredAt} = ? WHERE ${d.id} = ?`

/**
 * The body an endpoint receives (DESIGN §9): the SPEC envelope `{event, timestamp, data}` plus
 * `id`, the endpoint's pinned `version` and `type` (= `event`, the Standard Webhooks name; `event`
 * stays for compatibility); an event sent by POST /webhooks/trigger carries `"test": true`.
 */
export function renderPayload(p: {
  messageId: string
  event: WebhookEvent
  version: number
  timestamp: string
  data: Record<string, unknown>
  test: boolean
}): string {
  // v1 is the only version: later versions transform `data` here, keyed by `version`.
  return JSON.stringify({
    id: p.messageId,
    type: p.event,
    event: p.event,
    version: p.version,
    timestamp: p.timestamp,
    ...(p.test ? { test: true } : {}),
    data: p.data,
  })
}

/** One webhook event to queue: what happened and its data. */
export interface EventToQueue {
  event: WebhookEvent
  data: Record<string, unknown>
  /**
   * What the message is about, from which its id is derived (`messageIdOf`): the same fact
   * queued again (an outbox replayed, a platform restored from a backup) gets the same
   * `webhook-id`, so a receiver that deduplicates by it, as Standard Webhooks advises, credits it
   * once. Without one (a test event) the message gets a fresh id.
   */
  key?: string
}

/**
 * The message id of a tenant's event about `key`: `msg_` and 32 hex digits derived from them.
 *
 * @example
 * messageIdOf('acme', 'payment.success', 'pay_0192…') // the same id every time
 */
export const messageIdOf = (tenantId: string, event: WebhookEvent, key: string): string =>
  derivedId('msg', tenantId, event, key)

/**
 * Queues one message per event for every enabled endpoint of the tenant subscribed to it, all in
 * one write (a savepoint inside the caller's `db.write`): a batch of 1,000 categorized
 * transactions reads the tenant's endpoints once and commits once. Returns, per event, the
 * message id and its delivery ids, and the endpoints that got work.
 */
export function enqueueEvents(
  deps: WebhookDeps,
  input: {
    tenantId: string
    events: readonly EventToQueue[]
    /** The events' `timestamp` (default: now). */
    occurredAt?: string
    /** Sent by POST /webhooks/trigger: the body says `"test": true`. */
    test?: boolean
  },
): { messages: Array<{ messageId: string; deliveries: string[] }>; endpoints: string[] } {
  const { tenantId, events, occurredAt, test = false } = input
  const endpoints = deps.db.orm
    .select({
      id: webhookEndpoints.id,
      events: webhookEndpoints.events,
      version: webhookEndpoints.version,
    })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.tenantId, tenantId), eq(webhookEndpoints.status, 'enabled')))
    .all()
    .map((e) => ({ ...e, events: new Set(JSON.parse(e.events) as string[]) }))
  const nowMs = deps.clock.nowMs()
  const now = new Date(nowMs).toISOString()
  const timestamp = occurredAt ?? now
  const first = deps.config.retrySchedule[0] ?? 0
  const insert = deps.db.sqlite.query(ENQUEUE_SQL)
  const touched = new Set<string>()
  const messages = events.map((e) => ({
    messageId: e.key === undefined ? newId('msg') : messageIdOf(tenantId, e.event, e.key),
    deliveries: [] as string[],
  }))
  deps.db.write(() => {
    events.forEach(({ event, data }, i) => {
      const { messageId, deliveries } = messages[i]!
      const due = nowMs + jittered(first)
      for (const e of endpoints) {
        if (!e.events.has(event)) continue
        const id = newId('del')
        const body = renderPayload({ messageId, event, version: e.version, timestamp, data, test })
        insert.run(id, tenantId, e.id, messageId, event, body, due, now, now)
        deliveries.push(id)
        touched.add(e.id)
      }
    })
  })
  return { messages, endpoints: [...touched] }
}

/** Queues one message for the tenant's subscribed endpoints (see `enqueueEvents`). */
export function enqueueEvent(
  deps: WebhookDeps,
  input: {
    tenantId: string
    event: WebhookEvent
    data: Record<string, unknown>
    occurredAt?: string
    test?: boolean
  },
): { messageId: string; deliveries: string[]; endpoints: string[] } {
  const { event, data, ...rest } = input
  const r = enqueueEvents(deps, { ...rest, events: [{ event, data }] })
  return { ...r.messages[0]!, endpoints: r.endpoints }
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
  /** Never `delivering`: that is only found in files written by earlier versions. */
  status: Exclude<DeliveryStatus, 'delivering'>
  nextAttemptAt: number | null
  disabled: boolean
}
type AttemptedDelivery = Pick<DeliveryRow, 'id' | 'tenantId' | 'endpointId' | 'attempts'> & {
  /** The row's rowid when claimed: the update finds the row by it, without the id index. */
  seq: number
}

/** A claimed delivery: what an attempt needs, and where its row is (`seq`, the rowid). */
export type ClaimedDelivery = Pick<DeliveryRow, (typeof CLAIMED_COLUMNS)[number]> & { seq: number }

/** The columns a claim reads of its delivery (claims.ts). */
export const CLAIMED_COLUMNS = [
  'id',
  'tenantId',
  'endpointId',
  'messageId',
  'payload',
  'attempts',
  'nextAttemptAt',
] as const

/**
 * Records attempts and decides what comes next, all in one transaction: delivered; retried per
 * the schedule; dead after the last attempt; dead with the endpoint disabled on 410 Gone.
 * Batching many outcomes into one commit is what keeps the durable queue fast (DESIGN §14).
 */
export function recordAttempts(
  deps: WebhookDeps,
  items: ReadonlyArray<{ delivery: AttemptedDelivery; outcome: AttemptOutcome }>,
): AttemptResult[] {
  const insert = deps.db.sqlite.query(ATTEMPT_SQL)
  const update = deps.db.sqlite.query(`${OUTCOME_SQL} WHERE rowid = ? AND ${d.id} = ?`)
  // Only if the rowid no longer names the row (a copy restored from a backup renumbers them).
  const updateById = deps.db.sqlite.query(`${OUTCOME_SQL} WHERE ${d.id} = ?`)
  const disable = deps.db.sqlite.query(DISABLE_SQL)
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
      const values = [
        status,
        attempts,
        next ?? nowMs,
        outcome.statusCode,
        error,
        now,
        status === 'delivered' ? now : null,
      ] as const
      if (update.run(...values, delivery.seq, delivery.id).changes === 0)
        updateById.run(...values, delivery.id)
      if (gone) disable.run('the endpoint answered 410 Gone', now, delivery.endpointId)
      return { status, nextAttemptAt: next, disabled: gone }
    }),
  )
}

/**
 * Marks answered deliveries delivered (a 2xx arrived), many in one commit: the receivers have
 * them, so after this commit a crash never sends them again.
 */
export function markDelivered(
  deps: WebhookDeps,
  items: ReadonlyArray<{ id: string; statusCode: number; at: string }>,
): void {
  if (items.length === 0) return
  const mark = deps.db.sqlite.query(DELIVERED_SQL)
  deps.db.write(() => {
    for (const m of items) mark.run(m.statusCode, m.at, m.at, m.id)
  })
}
