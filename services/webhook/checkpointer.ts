import type { Db } from '../kernel/db.ts'
import type { Logger } from '../kernel/log.ts'

/**
 * Checkpoints the webhook queue's WAL from a thread of its own. Every turn of the dispatcher
 * commits a few pages; past 1,000 WAL pages SQLite's automatic checkpoint copies the WAL into the
 * database file and syncs it inside the commit that crossed the line (10-34 ms each, about 40% of
 * the queue's transaction time), on the thread that claims and records every delivery. While this
 * runs, that connection's automatic checkpoints are off and the worker, with its own connection,
 * looks at the WAL's length every `everyMs` (a NOOP checkpoint: it copies nothing):
 * - past `capFrames`, PASSIVE checkpoints copy it into the database without waiting for, nor
 *   holding up, readers and writers, a few in a row until one has copied every frame: the
 *   queue's next write may then start the WAL over from its beginning, as SQLite does for a
 *   writer that finds it all copied. Nothing waits on this thread for that.
 * - past twice the cap (the next writes did not start it over: a reader was in the way, or a
 *   PASSIVE was copying just then), a RESTART right after such a PASSIVE makes them: with
 *   nothing left to copy it holds writers back for a moment, not for a copy and its syncs. The
 *   file then keeps its size, about twice the cap, and is written over from its beginning.
 * - unchanged for `idleMs` (the queue is idle), it is emptied (TRUNCATE) too, so an idle queue
 *   keeps no WAL on disk; a trickle of writes never counts as idle, or each would cost a sync.
 * What is committed is in the WAL either way: checkpoints only move it, so a crash loses and
 * repeats nothing more or less than before.
 *
 * The worker is made from a source string, so the single executable needs no file of its own.
 */
const source = `
import { Database } from 'bun:sqlite'
let db = null
let timer = null
let opts = null
let last = 0
let changedAt = performance.now()
/** PASSIVE, a few in a row, until one has copied every frame; whether one did. */
const catchUp = () => {
  for (let i = 0; i < 8; i++) {
    const { busy, log, checkpointed } = db.query('PRAGMA wal_checkpoint(PASSIVE)').get()
    if (busy !== 1 && checkpointed === log) return true
  }
  return false
}
/**
 * A checkpoint in \`mode\` (RESTART, TRUNCATE) right after the PASSIVEs that leave it nothing to
 * copy, tried again every quarter millisecond for up to waitMs: SQLite's busy handler, whose waits
 * grow to 100 ms, would keep missing the gaps between a busy writer's turns. Whether it went through.
 */
const startOver = (mode, waitMs) => {
  const until = performance.now() + waitMs
  for (;;) {
    catchUp()
    if (db.query('PRAGMA wal_checkpoint(' + mode + ')').get().busy !== 1) return true
    if (performance.now() >= until) return false
    Bun.sleepSync(0.25)
  }
}
const step = () => {
  timer = null
  try {
    const { log } = db.query('PRAGMA wal_checkpoint(NOOP)').get()
    if (log !== last) changedAt = performance.now()
    last = log
    if (log > 0 && performance.now() - changedAt >= opts.idleMs) {
      startOver('TRUNCATE', 0)
      // A reader in the way: tried again after another idle spell, not at every look.
      changedAt = performance.now()
    } else if (log > 2 * opts.capFrames) {
      postMessage({ restarted: log, busy: !startOver('RESTART', opts.capWaitMs) })
    } else if (log > opts.capFrames) catchUp()
  } catch (err) {
    postMessage({ error: String((err && err.message) || err) })
  }
  timer = setTimeout(step, opts.everyMs)
}
self.onmessage = (e) => {
  if (e.data.path && !db) {
    opts = e.data
    try {
      db = new Database(opts.path, { readwrite: true })
      db.run('PRAGMA busy_timeout = 0')
    } catch (err) {
      postMessage({ failed: String((err && err.message) || err) })
      return
    }
    postMessage({ ready: true })
    step()
  }
  if (e.data.stop) {
    if (timer) clearTimeout(timer)
    db?.close()
    db = null
    process.exit(0)
  }
}
`

let url: string | null = null

export interface CheckpointerOptions {
  /** Pause between two looks at the WAL's length. */
  everyMs?: number
  /** WAL frames (pages) past which it is copied so it may start over; at twice this, it must. */
  capFrames?: number
  /** How long a RESTART may wait for readers and writers before it is tried again later. */
  capWaitMs?: number
  /** How long the WAL stays unchanged before it counts as idle and is emptied. */
  idleMs?: number
}

export interface Checkpointer {
  /** The worker has its connection and the queue's own automatic checkpoints are off. */
  readonly running: boolean
  /** Ends the worker and gives the connection its checkpoint threshold back. */
  stop(): Promise<void>
}

/**
 * Moves `db`'s WAL checkpoints onto a worker thread until `stop`. A database in memory has no WAL:
 * nothing is started.
 *
 * @example
 * const checkpointer = startCheckpointer(deps.db, deps.log)
 * await checkpointer.stop()
 */
export function startCheckpointer(
  db: Db,
  log: Logger,
  { everyMs = 20, capFrames = 4096, capWaitMs = 200, idleMs = 1000 }: CheckpointerOptions = {},
): Checkpointer {
  let running = false
  let threshold: number | null = null
  if (db.path === ':memory:') return { running, stop: async () => {} }

  /** The connection's own checkpoints come back: no thread is checkpointing for it any more. */
  const giveBack = () => {
    running = false
    if (threshold !== null && !db.closed) db.sqlite.run(`PRAGMA wal_autocheckpoint = ${threshold}`)
    threshold = null
  }

  const failures = failureLog(log)
  url ??= URL.createObjectURL(new Blob([source], { type: 'application/javascript' }))
  // Unreferenced: the thread never keeps the process alive by itself.
  const worker = new Worker(url, { ref: false })
  const exited = new Promise<void>((resolve) => worker.addEventListener('close', () => resolve()))
  void exited.then(giveBack)
  let stopping = false
  worker.onmessage = (
    e: MessageEvent<{
      ready?: true
      failed?: string
      error?: string
      restarted?: number
      busy?: boolean
    }>,
  ) => {
    const m = e.data
    if (m.ready && !stopping && !db.closed) {
      const row = db.sqlite
        .query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint')
        .get()
      threshold = row?.wal_autocheckpoint ?? null
      db.sqlite.run('PRAGMA wal_autocheckpoint = 0')
      running = true
    } else if (m.failed) {
      log.warn('the webhook queue checkpoints in its commits: no checkpoint thread', {
        error: m.failed,
      })
    } else if (m.error) {
      failures.failed(m.error)
    } else if (m.restarted !== undefined) {
      log.debug('webhook queue WAL past twice its cap: checkpointed', {
        frames: m.restarted,
        restarted: !m.busy,
      })
    }
  }
  worker.postMessage({ path: db.path, everyMs, capFrames, capWaitMs, idleMs })

  return {
    get running() {
      return running
    },
    stop() {
      if (!stopping) {
        stopping = true
        // The threshold first: a commit after this point checkpoints by itself again.
        giveBack()
        worker.postMessage({ stop: true })
        // A worker stuck in a checkpoint must not hold the service's stop up.
        const kill = setTimeout(() => worker.terminate(), 2000)
        kill.unref?.()
        void exited.then(() => clearTimeout(kill))
      }
      return exited
    },
  }
}

/** How often a checkpoint that keeps failing (a lock another process holds) is logged again. */
const FAILURE_LOG_EVERY_MS = 60_000

/**
 * The thread tries every few ms: a failure that persists is logged once, then once a minute with
 * how many attempts failed meanwhile, not on every attempt.
 */
export function failureLog(log: Logger, now: () => number = Date.now) {
  let loggedAt = Number.NEGATIVE_INFINITY
  let since = 0
  return {
    failed(error: string) {
      since++
      if (now() - loggedAt < FAILURE_LOG_EVERY_MS) return
      log.warn('webhook queue checkpoint failed; the next one retries', { error, failures: since })
      loggedAt = now()
      since = 0
    },
  }
}
