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

/** One migration as drizzle-kit wrote it: statements split by `--> statement-breakpoint`. */
export interface Migration {
  tag: string
  sql: string
}
