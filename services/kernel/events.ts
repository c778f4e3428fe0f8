import type { EventEnvelope, Topic, TopicEvent } from '../../schema/events.ts'
import { inbox, outbox } from '../../schema/kernel.ts'
import type { Clock } from './clock.ts'
import { sqlNames } from './columns.ts'
import type { Db } from './db.ts'
import { newId } from './ids.ts'
import { counter } from './metrics.ts'

/** The outbox relay that publishes what emitEvent writes (relay.ts). */
export * from './relay.ts'

interface EmitInput<T extends string, D> {
  topic: T
  tenantId: string
  data: D
  id?: string
  version?: number
}

const o = sqlNames(outbox)
const i = sqlNames(inbox)
const INSERT_OUTBOX = `INSERT INTO ${o.$} (${o.id}, ${o.topic}, ${o.tenantId}, ${o.payload}, ${o.createdAt}) VALUES (?, ?, ?, ?, ?)`
const INSERT_INBOX = `INSERT OR IGNORE INTO ${i.$} (${i.consumer}, ${i.eventId}, ${i.handledAt}) VALUES (?, ?, ?)`

/**
 * Writes an event to the database's outbox. Call it inside `db.write(...)` together with the state
 * change it reports: both commit or neither does. The relay publishes it after the commit.
 * `data` must fit the topic's schema in `schema/events.ts` (checked at compile time; subscribers
 * drop what does not fit).
 *
 * @example
 * db.write((orm) => {
 *   orm.update(payments).set({ status: 'success' }).where(...).run()
 *   emitEvent(db, { topic: topics.transactionsSuccess, tenantId, data })
 * })
 */
export function emitEvent<T extends Topic>(
  db: Db,
  e: EmitInput<T, TopicEvent<T>['data']>,
  clock?: Clock,
): TopicEvent<T>
/** A literal topic outside the contract (a test's or a probe's): any object as data. */
export function emitEvent<S extends string>(
  db: Db,
  e: EmitInput<S extends Topic ? never : string extends S ? never : S, Record<string, unknown>>,
  clock?: Clock,
): EventEnvelope
export function emitEvent(
  db: Db,
  e: EmitInput<string, Record<string, unknown>>,
  clock?: Clock,
): EventEnvelope {
  const envelope: EventEnvelope = {
    id: e.id ?? newId('evt'),
    type: e.topic,
    version: e.version ?? 1,
    tenant_id: e.tenantId,
    occurred_at: (clock?.now() ?? new Date()).toISOString(),
    data: e.data,
  }
  // A cached prepared statement, not drizzle's builder: a statement import writes hundreds.
  db.sqlite
    .query(INSERT_OUTBOX)
    .run(envelope.id, e.topic, e.tenantId, JSON.stringify(envelope), new Date().toISOString())
  db.markEvents()
  return envelope
}

/**
 * Runs `apply` once per (consumer, event id) in one transaction with the inbox record, so a
 * redelivered event is a no-op. Returns false when the event was handled before.
 *
 * @example
 * handleOnce(db, 'analytics', event.id, (orm) => insertTransaction(orm, event.data))
 */
export function handleOnce(
  db: Db,
  consumer: string,
  eventId: string,
  apply: (orm: Db['orm']) => void,
): boolean {
  const applied = db.write((orm) => {
    const res = db.sqlite.query(INSERT_INBOX).run(consumer, eventId, new Date().toISOString())
    if (res.changes === 0) return false
    apply(orm)
    return true
  })
  eventsHandled.inc({ consumer, outcome: applied ? 'applied' : 'duplicate' })
  return applied
}

const eventsHandled = counter(
  'mmp_events_handled_total',
  'Events consumers received, applied or dropped as repeats',
  ['consumer', 'outcome'],
)
