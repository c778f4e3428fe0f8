import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * The webhook service keeps everything in `platform/webhook.db` so one worker can scan every
 * tenant's due deliveries; every row carries `tenant_id` and every tenant-facing query filters on it.
 */

/** A tenant-registered receiving URL (Svix: endpoint). */
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    url: text('url').notNull(),
    /** JSON array of webhook event names. */
    events: text('events').notNull(),
    secret: text('secret').notNull(),
    /** After a rotation the old secret keeps signing alongside the new one until it expires. */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: text('previous_secret_expires_at'),
    /** Event payload version pinned for this endpoint. */
    version: integer('version').notNull().default(1),
    /** Deliveries per second; null: the service default. */
    rateLimit: integer('rate_limit'),
    status: text('status').notNull(),
    disabledReason: text('disabled_reason'),
    description: text('description'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('webhook_endpoints_tenant').on(t.tenantId, t.id)],
)

/**
 * One message to one endpoint. `payload` is the exact body, fixed at enqueue so every attempt
 * and replay sends the same bytes. Status: pending → delivered | pending (retry) | dead. An
 * attempt in flight stays pending here (the dispatcher holds its claim in memory, see
 * `webhookDispatcher`); `delivering` is only found in files written by earlier versions, and is
 * turned back to pending when the dispatcher starts.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    /** The message id: the body's `id` and the `webhook-id` header, kept across retries. */
    messageId: text('message_id').notNull(),
    event: text('event').notNull(),
    payload: text('payload').notNull(),
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Epoch ms of the next attempt while pending. */
    nextAttemptAt: integer('next_attempt_at').notNull(),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
    deliveredAt: text('delivered_at'),
  },
  // The endpoint index serves every queue query: the dispatcher's per-endpoint claims directly,
  // and the queue-wide ones (pending endpoints, counts, purge, recovery) endpoint by endpoint
  // (queue.ts QUEUED_ENDPOINTS). Each index is written again on every status change of a row.
  (t) => [
    index('webhook_deliveries_endpoint').on(t.endpointId, t.status, t.nextAttemptAt),
    index('webhook_deliveries_tenant').on(t.tenantId, t.id),
  ],
)

/** Every HTTP attempt of a delivery, for the delivery log. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    deliveryId: text('delivery_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    at: text('at').notNull(),
    statusCode: integer('status_code'),
    latencyMs: integer('latency_ms').notNull(),
    responseExcerpt: text('response_excerpt'),
    error: text('error'),
  },
  (t) => [index('webhook_attempts_delivery').on(t.deliveryId, t.seq)],
)

/**
 * The dispatcher working this queue: the one started last. Its claims live in its memory, so a
 * second one on the same file would send what the first has in flight; starting takes the queue
 * over, and a dispatcher claims nothing more once it sees another one has (one row, id 1).
 */
export const webhookDispatcher = sqliteTable('webhook_dispatcher', {
  id: integer('id').primaryKey(),
  owner: text('owner').notNull(),
  startedAt: text('started_at').notNull(),
})
