import type { Database } from 'bun:sqlite'
import { type CheckpointLog, failureLog, hold, release } from './checkpoint-holds.ts'
import type { Db } from './db.ts'

export { type CheckpointLog, failureLog }

/**
 * Checkpoints one WAL database from a thread of its own. Past 1,000 WAL pages SQLite's automatic
 * checkpoint copies the WAL into the database file and syncs it inside the commit that crossed
 * the line (10-50 ms on a busy disk), on the thread that serves every request. While this runs,
 * the connection's automatic checkpoints are off and the worker, with its own connection, looks
 * at the WAL's length every `everyMs` (a NOOP checkpoint: it copies nothing):
 * - past `capFrames`, PASSIVE checkpoints copy it into the database without waiting for, nor
 *   holding up, readers and writers, a few in a row until one has copied every frame: the next
 *   write may then start the WAL over from its beginning, as SQLite does for a writer that finds
 *   it all copied. Nothing waits on this thread for that.
 * - past twice the cap (the next writes did not start it over: a reader was in the way, or a
 *   PASSIVE was copying just then), a RESTART right after such a PASSIVE makes them: with
 *   nothing left to copy it holds writers back for a moment, not for a copy and its syncs. The
 *   file then keeps its size, about twice the cap, and is written over from its beginning.
 * - unchanged for `idleMs`, it is emptied (TRUNCATE) too, so an idle database keeps no WAL on
 *   disk; a trickle of writes never counts as idle, or each would cost a sync. With `endWhenIdle`
 *   the thread then ends, and its connection with it.
 * On `stop` a last PASSIVE copies what was committed before it into the database file.
 * What is committed is in the WAL either way: checkpoints only move it, so a crash loses and
 * repeats nothing more or less than before.
 *
 * The thread says it is ready, or has ended, through shared memory as well as by message, so a
 * writer that never lets the event loop turn (a long synchronous load) still hands its checkpoints
 * over, and takes them back, at its next `handOver()`. The worker is made from a source string, so
 * the single executable needs no file of its own for it.
 */
const source = `
import { Database } from 'bun:sqlite'
let db = null
let timer = null
let opts = null
let state = null
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
const end = () => {
  if (timer) clearTimeout(timer)
  timer = null
  Atomics.store(state, 0, 2)
  try {
    db?.close()
  } catch {}
  db = null
  process.exit(0)
}
const step = () => {
  timer = null
  try {
    const { log } = db.query('PRAGMA wal_checkpoint(NOOP)').get()
    if (log !== last) changedAt = performance.now()
    last = log
    if (log > 0 && performance.now() - changedAt >= opts.idleMs) {
      const emptied = startOver('TRUNCATE', 0)
      if (emptied && opts.endWhenIdle) return end()
      // A reader in the way: tried again after another idle spell, not at every look.
      changedAt = performance.now()
    } else if (log === 0 && opts.endWhenIdle && performance.now() - changedAt >= opts.idleMs) {
      return end()
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
    state = new Int32Array(opts.state)
    try {
      db = new Database(opts.path, { readwrite: true })
      db.run('PRAGMA busy_timeout = 0')
    } catch (err) {
      Atomics.store(state, 0, 2)
      postMessage({ failed: String((err && err.message) || err) })
      process.exit(0)
      return
    }
    Atomics.store(state, 0, 1)
    postMessage({ ready: true })
    step()
  }
  if (e.data.stop && db) {
    try {
      catchUp()
    } catch {}
    end()
  }
}
`

let url: string | null = null

export interface CheckpointerOptions {
  /** What log lines call the database: 'the webhook queue'. */
  name: string
  log?: CheckpointLog
  /** Pause between two looks at the WAL's length. */
  everyMs?: number
  /** WAL frames (pages) past which it is copied so it may start over; at twice this, it must. */
  capFrames?: number
  /** How long a RESTART may wait for readers and writers before it is tried again later. */
  capWaitMs?: number
  /** How long the WAL stays unchanged before it counts as idle and is emptied. */
  idleMs?: number
  /** End the thread once an idle WAL is emptied (the owner starts another when it writes again). */
  endWhenIdle?: boolean
}

export interface Checkpointer {
  /** The thread checkpoints for the connection: its own automatic checkpoints are off. */
  readonly running: boolean
  /** The thread has ended (stopped, idle, or it could not open the file): it checkpoints no more. */
  readonly ended: boolean
  /**
   * Turns off the automatic checkpoints of the database's connection once the thread is ready,
   * or gives them back once it has ended. Cheap: call it before each write of a hot path that
   * may not let the event loop turn (a reopened handle is a new connection, handed over here too).
   */
  handOver(): void
  /** Ends the thread after a last PASSIVE and gives the connection its checkpoint threshold back. */
  stop(): Promise<void>
}

/** The thread's state in shared memory: 0 starting, READY, then ENDED. */
const READY = 1
const ENDED = 2

/**
 * Moves `db`'s WAL checkpoints onto a worker thread until `stop` (or, with `endWhenIdle`, until
 * the WAL has been idle and emptied). A database in memory has no WAL: nothing is started.
 *
 * @example
 * const checkpointer = startCheckpointer(db, { name: 'the webhook queue', log })
 * await checkpointer.stop()
 */
export function startCheckpointer(
  db: Db,
  {
    name,
    log,
    everyMs = 20,
    capFrames = 4096,
    capWaitMs = 200,
    idleMs = 1000,
    endWhenIdle = false,
  }: CheckpointerOptions,
): Checkpointer {
  if (db.path === ':memory:')
    return { running: false, ended: true, handOver() {}, stop: async () => {} }
  const state = new Int32Array(new SharedArrayBuffer(4))
  /** The connection handed over. */
  let conn: Database | null = null
  let stopping = false
  /** The connection as it is, without reopening a released handle. */
  const live = () => (db.closed ? null : db.sqlite)

  /** The connection's own checkpoints come back, unless another thread still holds them. */
  const giveBack = () => {
    if (conn) release(conn, live() === conn)
    conn = null
  }
  const handOver = () => {
    if (stopping || Atomics.load(state, 0) !== READY) return giveBack()
    const now = live()
    if (!now || now === conn) return
    giveBack()
    hold(now)
    conn = now
  }

  const failures = failureLog(name, log)
  url ??= URL.createObjectURL(new Blob([source], { type: 'application/javascript' }))
  // Unreferenced: the thread never keeps the process alive by itself.
  const worker = new Worker(url, { ref: false })
  const exited = new Promise<void>((resolve) => worker.addEventListener('close', () => resolve()))
  void exited.then(() => {
    // Terminated rather than ended by itself: say so to whoever calls handOver next.
    Atomics.store(state, 0, ENDED)
    giveBack()
  })
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
    if (m.ready) handOver()
    else if (m.failed) {
      log?.warn(`${name} checkpoints in its commits: no checkpoint thread`, { error: m.failed })
    } else if (m.error) failures.failed(m.error)
    else if (m.restarted !== undefined) {
      log?.debug(`${name} WAL past twice its cap: checkpointed`, {
        frames: m.restarted,
        restarted: !m.busy,
      })
    }
  }
  worker.postMessage({
    path: db.path,
    state: state.buffer,
    everyMs,
    capFrames,
    capWaitMs,
    idleMs,
    endWhenIdle,
  })

  return {
    get running() {
      return conn !== null && Atomics.load(state, 0) === READY
    },
    get ended() {
      return Atomics.load(state, 0) === ENDED
    },
    handOver,
    stop() {
      if (!stopping) {
        stopping = true
        // The threshold first: a commit after this point checkpoints by itself again.
        giveBack()
        worker.postMessage({ stop: true })
        // A worker stuck in a checkpoint must not hold its owner's stop up.
        const kill = setTimeout(() => worker.terminate(), 2000)
        kill.unref?.()
        void exited.then(() => clearTimeout(kill))
      }
      return exited
    },
  }
}
