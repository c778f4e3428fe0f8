import { and, asc, gt, isNull, lte } from 'drizzle-orm'
import { inbox, outbox } from '../../schema/kernel.ts'
import type { EventBus } from './bus.ts'
import { sqlNames } from './columns.ts'
import type { Db } from './db.ts'
import { faultPoint } from './faults.ts'
import type { Logger } from './log.ts'
import { counter } from './metrics.ts'

const eventsPublished = counter('mmp_events_published_total', 'Events the outbox relay published', [
  'topic',
])

/**
 * Publishes a database's unsent outbox rows in order, `batchSize` at a time, until none is left
 * (or the relay stops, or the file is gone), marking each batch's published rows sent.
 */
export async function publishUnsent({
  db,
  bus,
  batchSize,
  stopped,
}: {
  db: Db
  bus: EventBus
  batchSize: number
  stopped: () => boolean
}): Promise<void> {
  while (!stopped() && !db.gone) {
    const rows = db.orm
      .select({ seq: outbox.seq, topic: outbox.topic, payload: outbox.payload })
      .from(outbox)
      .where(isNull(outbox.sentAt))
      .orderBy(asc(outbox.seq))
      .limit(batchSize)
      .all()
    if (rows.length === 0) return
    // Publish in order, then mark the published rows sent in one commit: on a FULL-synced
    // money database one sync per event would cap the relay at the disk's sync rate. A crash
    // in between republishes a few events, which consumers' inboxes drop.
    let published = 0
    try {
      for (const row of rows) {
        await bus.publish(row.topic, JSON.parse(row.payload))
        published++
        eventsPublished.inc({ topic: row.topic })
      }
      faultPoint('relay.after_publish')
    } finally {
      if (published > 0 && !db.gone) {
        const last = rows[published - 1]!.seq
        db.orm
          .update(outbox)
          .set({ sentAt: new Date().toISOString() })
          .where(and(isNull(outbox.sentAt), lte(outbox.seq, last)))
          .run()
      }
    }
  }
}

/**
 * Publishes again what a database's outbox sent within the last `sinceMs`: a broker that died or
 * restarted may have acknowledged messages it then lost. Consumers' inboxes drop the repeats.
 */
export async function republishRecent({
  db,
  bus,
  log,
  sinceMs,
}: {
  db: Db
  bus: EventBus
  log: Logger
  sinceMs: number
}): Promise<void> {
  try {
    const since = new Date(Date.now() - sinceMs).toISOString()
    const rows = db.orm
      .select({ topic: outbox.topic, payload: outbox.payload })
      .from(outbox)
      .where(and(gt(outbox.sentAt, since)))
      .orderBy(asc(outbox.seq))
      .all()
    for (const row of rows) await bus.publish(row.topic, JSON.parse(row.payload))
  } catch (err) {
    log.warn('outbox replay failed; consumers may miss what the broker lost', {
      db: db.path,
      error: (err as Error)?.message,
    })
  }
}

/**
 * Looks at every watched database for unsent rows another process wrote (a CLI command) and
 * drains them; prunes delivered rows when `prune`. Forgets databases that are gone.
 */
export function pollOutboxes({
  watched,
  busy,
  drain,
  prune,
  log,
}: {
  watched: Map<string, Db>
  /** A drain is running or waiting out its backoff: the poll leaves it be. */
  busy: (db: Db) => boolean
  drain: (db: Db) => Promise<void>
  prune: boolean
  log: Logger
}): void {
  for (const [path, db] of watched) {
    if (db.gone) {
      watched.delete(path)
      continue
    }
    // A released handle is not reopened just to look: a commit or a retry reopens it.
    if (db.closed || busy(db)) continue
    try {
      if (hasUnsent(db)) void drain(db)
      if (prune) pruneDelivered(db)
    } catch (err) {
      log.warn('outbox poll failed', { db: path, error: (err as Error)?.message })
    }
  }
}

/**
 * After the broker connection came back, and a moment later once consumers have subscribed
 * again, republishes what each database sent within `windowMs`, then drains it.
 */
export function republishAfterReconnect({
  bus,
  log,
  windowMs,
  active,
  dbs,
  drain,
}: {
  bus: EventBus
  log: Logger
  windowMs: number
  /** Whether the relay publishes now (released, not stopped, not paused). */
  active: () => boolean
  dbs: () => Db[]
  drain: (db: Db) => Promise<void>
}): void {
  setTimeout(() => {
    if (!active()) return
    log.info('republishing recent events after the broker connection came back', {
      window_s: windowMs / 1000,
    })
    void Promise.all(
      dbs().map((db) => republishRecent({ db, bus, log, sinceMs: windowMs }).then(() => drain(db))),
    ).then(() => log.info('recent events republished after the broker connection came back'))
  }, 2000).unref?.()
}

const o = sqlNames(outbox)
const i = sqlNames(inbox)
const ANY_UNSENT = `SELECT 1 FROM ${o.$} WHERE ${o.sentAt} IS NULL LIMIT 1`
const PRUNE_OUTBOX = `DELETE FROM ${o.$} WHERE ${o.sentAt} IS NOT NULL AND ${o.sentAt} < ?`
const PRUNE_INBOX = `DELETE FROM ${i.$} WHERE ${i.handledAt} < ?`

function hasUnsent(db: Db): boolean {
  return !!db.sqlite.query(ANY_UNSENT).get()
}

export const PRUNE_EVERY_MS = 3_600_000
/** Sent events and handled-event records are kept this long, then deleted. */
export const EVENT_RETENTION_MS = 30 * 86_400_000

/**
 * Deletes outbox rows sent and inbox records handled more than EVENT_RETENTION_MS ago, so the
 * tables do not grow forever. Replays (`mmp replay events`) reach back as far as this.
 */
export function pruneDelivered(db: Db, now = Date.now()): void {
  const before = new Date(now - EVENT_RETENTION_MS).toISOString()
  db.sqlite.query(PRUNE_OUTBOX).run(before)
  db.sqlite.query(PRUNE_INBOX).run(before)
}
