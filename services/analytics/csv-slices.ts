import type { Database } from 'bun:sqlite'
import { csvBytesKit, csvTextKit } from './csv.ts'
import { EXPORT_SELECT, KEYSET, NEWEST_FIRST, TIME_INDEX, tx } from './stored-sql.ts'

/**
 * A whole-history CSV export, read and written by two worker threads at once. On one thread the
 * export of a million rows is the raw read of the rows (SQLite stepping, a JS value per cell)
 * plus as much again to build the lines; the two threads each take every other slice of
 * `sliceRows` rows, read it from a read-only connection of their own and send its pages back as
 * bytes, and this thread only writes them out in order. What waits is at most a slice a thread.
 *
 * A slice is a keyset range over the time index: its bounds are the keys every `sliceRows` rows,
 * found by an index-only walk (LIMIT 1 OFFSET n), so each row falls in exactly one slice and the
 * output is the single-thread export's, byte for byte. Like the single-thread export, each page
 * is its own read: rows written during the export may or may not be in it.
 */
export interface Slice {
  /** Inclusive upper key (occurred_at, id); null for the newest slice. */
  hi: [string, string] | null
  /** Exclusive lower key; null for the oldest slice. */
  lo: [string, string] | null
}

/**
 * The slices of the rows `where` selects, newest first, `size` rows each (the last fewer), cut
 * one at a time as they are asked for: each costs one index-only walk of `size` keys.
 */
export function sliceCutter(
  sqlite: Database,
  where: string,
  args: readonly unknown[],
  size: number,
): () => Slice | null {
  const keys = `SELECT ${tx.occurredAt}, ${tx.id} FROM ${tx.$} INDEXED BY ${TIME_INDEX} WHERE ${where}`
  const order = `${NEWEST_FIRST} LIMIT 1 OFFSET ?`
  const first = sqlite.query(`${keys} ${order}`)
  const next = sqlite.query(`${keys} AND ${KEYSET} < (?, ?) ${order}`)
  let hi: [string, string] | null = null
  let ended = false
  return () => {
    if (ended) return null
    const lo = (
      hi
        ? next.values(...(args as never[]), hi[0], hi[1], size - 1)
        : first.values(...(args as never[]), size)
    )[0] as [string, string] | undefined
    const slice = { hi, lo: lo ?? null }
    if (lo) hi = lo
    else ended = true
    return slice
  }
}

/** What a worker is asked: one slice of the rows `where` selects, in pages of `page` rows. */
export interface SliceJob extends Slice {
  n: number
  path: string
  where: string
  args: unknown[]
  page: number
}

/** What a worker answers: a page's bytes, the end of the slice, or why it failed. */
export type SliceReply =
  | { n: number; bytes: Uint8Array<ArrayBuffer> }
  | { n: number; done: true }
  | { n: number; error: string }

const source = `
import { Database } from 'bun:sqlite'
const { exportPageBytes } = (${csvBytesKit.toString()})((${csvTextKit.toString()})().unparsePage)
const SELECT = ${JSON.stringify(EXPORT_SELECT)}
const KEYSET = ${JSON.stringify(KEYSET)}
// A connection a slice, closed when the slice is read: a thread between slices (waiting for a
// slow client, say) holds no file open, so an erased tenant's file is let go.
self.onmessage = (e) => {
  const job = e.data
  let db = null
  try {
    db = new Database(job.path, { readonly: true })
    db.run('PRAGMA busy_timeout = 5000')
    const lo = job.lo ? ' AND ' + KEYSET + ' > (?, ?)' : ''
    const hi = job.hi ? ' AND ' + KEYSET + ' <= (?, ?)' : ''
    const order = ' ' + ${JSON.stringify(`${NEWEST_FIRST} LIMIT ?`)}
    const loArgs = job.lo ?? []
    const first = db.query(SELECT + ' WHERE ' + job.where + hi + lo + order)
    // Later pages are bounded by the last row read, not also by the slice top: with two upper
    // bounds SQLite may seek by the wrong one and read the slice again from its top each page.
    const next = db.query(SELECT + ' WHERE ' + job.where + ' AND ' + KEYSET + ' < (?, ?)' + lo + order)
    let after = null
    for (;;) {
      const rows = after
        ? next.values(...job.args, after[0], after[1], ...loArgs, job.page)
        : first.values(...job.args, ...(job.hi ?? []), ...loArgs, job.page)
      if (rows.length === 0) break
      const last = rows[rows.length - 1]
      after = [last[1], last[0]]
      const bytes = exportPageBytes(rows)
      postMessage({ n: job.n, bytes }, [bytes.buffer])
      if (rows.length < job.page) break
    }
    postMessage({ n: job.n, done: true })
  } catch (err) {
    postMessage({ n: job.n, error: String((err && err.message) || err) })
  } finally {
    try {
      db?.close(true)
    } catch {
      db?.close(false)
    }
  }
}
`
/** Threads a whole-history export is read by. */
const WORKERS = 2
let url: string | null = null

/** A worker thread that reads and writes slices (SliceJob in, SliceReply out). */
export function sliceWorker(): Worker {
  url ??= URL.createObjectURL(new Blob([source], { type: 'application/javascript' }))
  return new Worker(url, { smol: true })
}

/**
 * Slices, `first` and then what `cut` gives, read by WORKERS threads and written here in order.
 * A thread that is done takes the next slice while fewer than WORKERS + 1 are unwritten, so
 * what waits in memory stays within a few slices however slowly the client reads. Once `gone`
 * says the database was closed for good (the tenant erased), the export fails at its next page.
 */
export async function writeSlices({
  controller,
  path,
  rows,
  first,
  cut,
  gone = () => false,
}: {
  controller: ReadableStreamDirectController
  path: string
  rows: { where: string; args: unknown[]; page: number }
  first: Slice
  cut: () => Slice | null
  gone?: () => boolean
}): Promise<void> {
  const copying = copiesOnWrite(controller)
  const slices: Array<{
    chunks: Uint8Array<ArrayBuffer>[]
    done: boolean
    error?: string
    by?: Worker
  }> = []
  const idle: Worker[] = []
  let wake: (() => void) | null = null
  let written = 0
  let pending: Slice | null = first
  // Cutting reads this thread's connection (it may be closed under us, e.g. the tenant erased);
  // a failure there, even in a worker's message handler, fails the export like a worker's does.
  let failed: string | null = null
  const assign = (worker: Worker) => {
    let slice: Slice | null
    try {
      slice = pending ?? cut()
    } catch (err) {
      failed ??= (err as Error).message
      wake?.()
      return
    }
    pending = null
    if (!slice) return
    const n = slices.length
    slices.push({ chunks: [], done: false, by: worker })
    const job: SliceJob = { n, path, ...rows, ...slice }
    worker.postMessage(job)
  }
  const workers = Array.from({ length: WORKERS }, () => {
    const worker = sliceWorker()
    worker.onmessage = (e: MessageEvent<SliceReply>) => {
      const m = e.data
      const slice = slices[m.n]!
      if ('bytes' in m) slice.chunks.push(m.bytes)
      else if ('done' in m) {
        slice.done = true
        if (slices.length - written < WORKERS + 1) assign(worker)
        else idle.push(worker)
      } else slice.error = m.error
      wake?.()
    }
    // A thread that fails or ends with its slice unfinished fails the export (never a hang).
    const lost = (why: string) => {
      for (const slice of slices) if (slice.by === worker && !slice.done) slice.error ??= why
      wake?.()
    }
    worker.onerror = (e) => lost(e.message)
    worker.addEventListener('close', () => lost('a worker thread ended'))
    return worker
  })
  try {
    for (const worker of workers) assign(worker)
    while (written < slices.length) {
      const slice = slices[written]!
      const error = slice.error ?? failed ?? (gone() ? 'the database was closed' : null)
      if (error) throw new Error(`CSV export: ${error}`)
      const chunk = slice.chunks.shift()
      if (chunk) {
        if (!(await sent(controller, chunk))) return
        if (copying) chunk.buffer.transfer(0)
      } else if (slice.done) {
        slices[written++] = { chunks: [], done: true }
        for (let worker = idle.pop(); worker; worker = idle.pop()) assign(worker)
      } else await new Promise<void>((resolve) => (wake = resolve))
    }
    // Every assigned slice is written; a slice that could not be cut must not end the file early.
    if (failed) throw new Error(`CSV export: ${failed}`)
    controller.close()
  } finally {
    for (const worker of workers) worker.terminate()
  }
}

/**
 * Bun's HTTP response sink copies what it is given, into the socket or a buffer of its own
 * (HTTPServerWritable.write), so a written page's buffer can be given back at once instead of
 * when this thread's collector next runs: of a million rows' 136 MB, 30-40 MB more waited in
 * memory without it. Other readers of the stream (Response#text, app.handle in tests) keep the
 * chunks they are given, so they get theirs untouched.
 */
function copiesOnWrite(controller: ReadableStreamDirectController): boolean {
  const kind = Object.prototype.toString.call(controller)
  return (
    kind === '[object ReadableHTTPResponseSinkController]' ||
    kind === '[object ReadableHTTPSResponseSinkController]'
  )
}

/** Writes to a direct stream, waiting while the client is behind; false once it has gone. */
export async function sent(
  controller: ReadableStreamDirectController,
  data: string | Uint8Array,
): Promise<boolean> {
  const written = controller.write(data)
  return (typeof written === 'number' ? written : await written) > 0
}
