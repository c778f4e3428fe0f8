import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Every service database carries an outbox and an inbox (DESIGN §7): an event is written in the
 * same transaction as the state change it reports, and a consumer records the ids it handled in
 * the same transaction as the effect.
 */
export const outbox = sqliteTable(
  'outbox',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    topic: text('topic').notNull(),
    tenantId: text('tenant_id').notNull(),
    payload: text('payload').notNull(),
    createdAt: text('created_at').notNull(),
    sentAt: text('sent_at'),
  },
  (t) => [
    index('outbox_unsent').on(t.sentAt, t.seq),
    index('outbox_topic').on(t.topic, t.createdAt),
  ],
)

export const inbox = sqliteTable(
  'inbox',
  {
    consumer: text('consumer').notNull(),
    eventId: text('event_id').notNull(),
    handledAt: text('handled_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.consumer, t.eventId] })],
)

/**
 * Every service database carries the kernel's `Idempotency-Key` records (services/kernel/
 * idempotency.ts): per tenant, route and key, the request's hash and, once answered, the status and
 * body to replay. `status` null means the first request is still running until `locked_until`.
 * Rows older than 24 h are forgotten. (The payment service keeps its own `idempotency_keys`, bound
 * to provider requests.)
 */
export const idempotentRequests = sqliteTable(
  'idempotent_requests',
  {
    tenantId: text('tenant_id').notNull(),
    route: text('route').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: integer('status'),
    contentType: text('content_type'),
    body: text('body'),
    /** The answer's `Location` (a created resource, a job to follow), replayed with it. */
    location: text('location'),
    createdAt: integer('created_at').notNull(),
    lockedUntil: integer('locked_until').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.route, t.key] }),
    index('idempotent_requests_created').on(t.createdAt),
  ],
)

/** One migration as drizzle-kit wrote it: statements split by `--> statement-breakpoint`. */
export interface Migration {
  tag: string
  sql: string
}
