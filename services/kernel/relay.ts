import { type BackoffStep, exponentialBackoff, nextWait } from './backoff.ts'
import { createBulkGate } from './bulk.ts'
import type { EventBus } from './bus.ts'
import type { Db } from './db.ts'
import type { Logger } from './log.ts'
import { startPeriodic } from './periodic.ts'
import {
  PRUNE_EVERY_MS,
  pollOutboxes,
  publishUnsent,
  republishAfterReconnect,
  republishRecent,
} from './relay-publish.ts'

export interface Relay {
  /** Starts relaying a database's outbox: drains what is unsent now and after each commit. */
  watch(db: Db, opts?: { replaySinceMs?: number }): void
  /** Resolves when the replay and drain started by `watch` for this database are done. */
  settled(db: Db): Promise<void>
  /** Publishes everything unsent in every watched database. */
  flush(): Promise<void>
  /**
   * Lets a relay created `held` start publishing: the replays and drains its watches asked for
   * run now. The daemon releases its relays once every service in the process has subscribed,
   * because the broker keeps nothing for a subscriber that comes later.
   */
  release(): void
  /** Drains a database now (another process said it wrote events there). */
  nudge(db: Db): void
  /**
   * Whether this process publishes now: released, not stopped, not paused. A process still
   * starting (its consumers not yet subscribed) or a standby worker does not.
   */
  publishing?(): boolean
  /**
   * Runs a bulk write (a statement import committing chunk after chunk) with the database's
   * drains and WAL checkpoints held (bulk.ts), then drains once when it settles, failed or not,
   * after the caller's response is on its way. A held drain still goes through every
   * `bulkHoldMs`; `flush()` is never held.
   *
   * @example
   * const result = await ctx.relay.bulk(db, () => importChunks(db, file))
   */
  bulk<T>(db: Db, write: () => Promise<T>): Promise<T>
  stop(): Promise<void>
}

/** What a relay is made with. */
export interface RelayOptions {
  bus: EventBus
  log: Logger
  batchSize?: number
  retryMs?: number
  maxRetryMs?: number
  paused?: boolean
  /** Start held: watch and record, publish nothing until `release()`. */
  held?: boolean
  /**
   * How often every watched database is checked for unsent rows, so events written by another
   * process on the same file (a CLI command) go out too. 0 disables.
   */
  pollMs?: number
  /**
   * Called instead of publishing while the relay is held and a database has unsent events: a
   * standby worker tells the worker that relays about its writes this way.
   */
  onHeld?: (db: Db) => void
  /**
   * After the broker connection comes back, republish what was sent this recently (a moment
   * later, once consumers have subscribed again): a broker that restarted may have acknowledged
   * messages it then lost. Consumers' inboxes drop the repeats. 0 disables.
   */
  replayAfterReconnectMs?: number
  /** During a `bulk` write, a held drain goes through once this long passed since the last. */
  bulkHoldMs?: number
}

/**
 * The outbox relay: publishes unsent rows in order and marks them sent once the broker acked.
 * On first watch after a start it also republishes what was sent within `replaySinceMs`, because an
 * embedded broker loses what it held when the process died; consumers' inboxes drop the repeats.
 *
 * Nothing here may end the process (DESIGN §15): a failed drain is logged and retried with a
 * backoff per database (1 s doubling to `maxRetryMs`), and the poller survives a failing file.
 * A database being drained is not held while the broker acknowledges: a slow or absent broker
 * would otherwise pin one handle per tenant past the open-database cap (DESIGN §15). The registry
 * may release it between reading a batch and marking it sent; marking reopens it.
 */
export function createRelay(opts: RelayOptions): Relay {
  /** One handle per file: a newer handle of the same file (after a release) replaces the old. */
  const watched = new Map<string, Db>()
  const running = new Map<Db, Promise<void>>()
  const starting = new Map<Db, Promise<void>>()
  const again = new Set<Db>()
  /** Per database file: the backoff of its failing drain (cockatiel, 1 s doubling, no jitter). */
  const backoff = new Map<string, BackoffStep>()
  let stopped = false
  let held = opts.held ?? false
  /** Watches made while held: their replay window, run on release. */
  const waiting = new Map<Db, number>()
  const batch = opts.batchSize ?? 500
  const retryMs = opts.retryMs ?? 1000
  const retryPolicy = exponentialBackoff({ initialMs: retryMs, maxMs: opts.maxRetryMs ?? 30_000 })
  const bulks = createBulkGate(opts.bulkHoldMs ?? 2000)

  const retryLater = (db: Db, err: unknown) => {
    const next = nextWait(retryPolicy, backoff.get(db.path))
    backoff.set(db.path, next)
    const delay = next.duration
    opts.log.warn('outbox relay failed; retrying', {
      db: db.path,
      retry_ms: delay,
      error: (err as Error)?.message,
    })
    setTimeout(() => void drain(db), delay).unref?.()
  }

  const drain = (db: Db, force = false): Promise<void> => {
    if (!force && !bulks.admits(db)) return Promise.resolve()
    if (held && !stopped && !db.gone) opts.onHeld?.(db)
    if (opts.paused || held || stopped || db.gone) return Promise.resolve()
    const current = running.get(db)
    if (current) {
      again.add(db)
      return current
    }
    const p = (async () => {
      try {
        do {
          again.delete(db)
          await publishUnsent({ db, bus: opts.bus, batchSize: batch, stopped: () => stopped })
        } while (again.has(db))
        backoff.delete(db.path)
      } catch (err) {
        retryLater(db, err)
      } finally {
        running.delete(db)
      }
    })()
    running.set(db, p)
    return p
  }

  const replayWindow = opts.replayAfterReconnectMs ?? 0
  if (replayWindow > 0)
    opts.bus.onReconnect?.(() =>
      republishAfterReconnect({
        bus: opts.bus,
        log: opts.log,
        windowMs: replayWindow,
        active: () => !(held || stopped || opts.paused),
        dbs: () => [...watched.values()].filter((db) => !db.gone && !db.closed),
        drain,
      }),
    )

  const pollMs = opts.pollMs ?? 1000
  let lastPrune = 0
  const poller =
    pollMs > 0 && !opts.paused
      ? startPeriodic({
          everyMs: pollMs,
          firstInMs: pollMs,
          backoff: { initialMs: pollMs, maxMs: pollMs },
          run: () => {
            const prune = Date.now() - lastPrune > PRUNE_EVERY_MS
            if (prune) lastPrune = Date.now()
            pollOutboxes({
              watched,
              busy: (db) => running.has(db) || backoff.has(db.path),
              drain,
              prune,
              log: opts.log,
            })
          },
          onFailure: (err) =>
            opts.log.error('outbox poller failed', { error: (err as Error)?.message }),
        })
      : null

  const begin = (db: Db, since: number) => {
    const start = (
      since > 0
        ? republishRecent({ db, bus: opts.bus, log: opts.log, sinceMs: since })
        : Promise.resolve()
    )
      .then(() => drain(db))
      .finally(() => starting.delete(db))
    starting.set(db, start)
  }

  return {
    watch(db, wopts) {
      if (watched.get(db.path) === db) return
      watched.set(db.path, db)
      db.onEvents(() => void drain(db))
      if (opts.paused) return
      const since = wopts?.replaySinceMs ?? 0
      if (held) {
        waiting.set(db, Math.max(since, waiting.get(db) ?? 0))
        return
      }
      begin(db, since)
    },
    release() {
      if (!held) return
      held = false
      for (const [db, since] of waiting) if (!db.gone) begin(db, since)
      waiting.clear()
    },
    nudge: (db) => void drain(db),
    publishing: () => !held && !stopped && !opts.paused,
    bulk: (db, write) => bulks.run(db, write, () => drain(watched.get(db.path) ?? db)),
    settled: (db) => starting.get(db) ?? running.get(db) ?? Promise.resolve(),
    async flush() {
      await Promise.all(
        [...watched.values()].filter((db) => !db.closed).map((db) => drain(db, true)),
      )
    },
    async stop() {
      stopped = true
      await poller?.stop()
      await Promise.all(running.values())
    },
  }
}

export { EVENT_RETENTION_MS, pruneDelivered } from './relay-publish.ts'
