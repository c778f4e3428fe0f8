import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createLogger } from '../kernel/log.ts'
import { unpackChunk, type WireChunk } from './chunk-wire.ts'
import { readRefused } from './pdf-limits.ts'
import type { StatementChunk, StatementRead } from './statement-row.ts'
import { fromWire, type WireError } from './thread-wire.ts'

/** How often the memory a read may grow by is checked, in ms. */
const MEMORY_EVERY_MS = 50

const log = createLogger('parser')

/** What a reading thread (statement-worker.ts, pdf-worker.ts) posts back. */
export type FromReadThread =
  | { chunk: WireChunk }
  | { page: number; pages: number }
  | { done: StatementRead }
  | { error: WireError }

/**
 * A reading thread's module: beside this one when run from source; in the single executable,
 * where every module is bundled into one file at the embedded root, the build entry of its own
 * (scripts/build.ts) by its path from that root.
 */
export function workerSpecifier(file: string): string {
  const beside = new URL(`./${file}`, import.meta.url)
  return existsSync(fileURLToPath(beside)) ? beside.href : `./services/parser/${file}`
}

export interface ReadBounds {
  timeoutMs: number
  maxMemoryBytes: number
}

export interface ReadThreadRun {
  /** The worker module (`workerSpecifier`). */
  specifier: string
  /** The first message: what to read and how. */
  start: unknown
  /** What the thread reads, in the words of its errors ("PDF", "file"). */
  what: string
  onChunk: (chunk: StatementChunk) => Promise<void> | void
  onPage?: (page: number, pages: number) => void
  /** Ends the thread and the read when aborted. */
  signal?: AbortSignal
  /** Keep the thread for the next read once this one finished cleanly (its module reads many files). */
  keep?: boolean
  /** The read on this thread when the worker cannot start (a binary built without its entry). */
  fallback: () => Promise<StatementRead>
  /**
   * Time and memory: past `timeoutMs`, or once the process has grown by more than `maxMemoryBytes`
   * since the read began (an inflate bomb, a hostile spreadsheet), the thread ends with a 422
   * naming the limit.
   */
  bounds?: ReadBounds
}

/**
 * Runs a statement read on a thread of its own: the chunks it posts are handed to `onChunk` in
 * order, one at a time, and each is acknowledged once its `onChunk` is done, so the reader runs at
 * most a few chunks ahead (thread-wire.ts). An `onChunk` that fails ends the thread and the read
 * with its error. The service's own thread only unpacks and stores chunks, so other tenants'
 * requests are served meanwhile.
 */
export function runReadThread(run: ReadThreadRun): Promise<StatementRead> {
  if (run.signal?.aborted) return Promise.reject(run.signal.reason)
  const kept = run.keep ? takeIdle(run.specifier) : undefined
  const worker = kept ?? new Worker(run.specifier)
  held(worker).ref()
  return new Promise<StatementRead>((resolve, reject) => {
    let over = false
    let heard = kept !== undefined
    let queue = Promise.resolve()
    const stopWatching = watch(run, (err) => end(err))
    const aborted = () => end(run.signal?.reason ?? new Error(`the ${run.what} read was stopped`))
    const stopped = () => end(new Error(`the ${run.what} reading thread stopped`))
    const finish = (done: boolean) => {
      over = true
      stopWatching()
      run.signal?.removeEventListener('abort', aborted)
      worker.removeEventListener('close', stopped)
      // Only a thread that finished its read cleanly, every chunk acknowledged, is kept.
      if (done && run.keep) keepIdle(run.specifier, worker)
      else worker.terminate()
    }
    const end = (err: unknown, read?: StatementRead) => {
      if (over) return
      // A file that held no statement (a spreadsheet bomb, say) leaves its thread unkept.
      finish(read?.headerFound === true)
      if (read) resolve(read)
      else reject(err)
    }
    worker.onmessage = (e: MessageEvent<FromReadThread>) => {
      heard = true
      const m = e.data
      if ('chunk' in m) {
        queue = queue.then(async () => {
          if (over) return
          await run.onChunk(unpackChunk(m.chunk))
          worker.postMessage({ ack: true })
        })
        queue.catch((err) => end(err))
      } else if ('page' in m) run.onPage?.(m.page, m.pages)
      else if ('done' in m) queue.then(() => end(null, m.done), end)
      else end(fromWire(m.error))
    }
    // A worker that ends without a word (it cannot, short of a crash) must not leave the read waiting.
    worker.addEventListener('close', stopped)
    worker.onerror = (e) => {
      e.preventDefault()
      if (heard || over) return end(new Error(e.message))
      finish(false)
      log.warn(`the ${run.what} reading thread could not start; reading on this thread`, {
        error: e.message,
      })
      run.fallback().then(resolve, reject)
    }
    run.signal?.addEventListener('abort', aborted, { once: true })
    worker.postMessage(run.start)
  })
}

/**
 * Reading threads kept between reads, by module: a new thread starts cold (its modules loaded
 * and its code not yet compiled, 0.5 s of a 100,000-row CSV's 1.5 s), a kept one reads at the
 * speed of a warm one. At most IDLE_KEPT a module, unreferenced while idle so they never keep
 * the process alive.
 */
const idle = new Map<string, Worker[]>()
const IDLE_KEPT = 2

/** Bun's Worker keeps the process alive or not (ref/unref), which the DOM type does not say. */
const held = (worker: Worker) => worker as Worker & { ref(): void; unref(): void }

function takeIdle(specifier: string): Worker | undefined {
  return idle.get(specifier)?.pop()
}

function keepIdle(specifier: string, worker: Worker): void {
  const list = idle.get(specifier) ?? []
  if (list.length >= IDLE_KEPT) return void worker.terminate()
  worker.onmessage = null
  worker.onerror = null
  held(worker).unref()
  list.push(worker)
  idle.set(specifier, list)
}

/** Starts the time and memory watch of a read; returns what stops it. */
function watch({ bounds, what }: ReadThreadRun, fail: (err: Error) => void): () => void {
  if (!bounds) return () => {}
  const { timeoutMs, maxMemoryBytes } = bounds
  const rss0 = process.memoryUsage().rss
  const deadline = setTimeout(
    () =>
      fail(
        readRefused(
          'time',
          `reading the ${what} took longer than ${timeoutMs / 1000} s`,
          timeoutMs,
        ),
      ),
    timeoutMs,
  )
  const mb = Math.round(maxMemoryBytes / 2 ** 20)
  const memory = setInterval(() => {
    if (process.memoryUsage().rss - rss0 > maxMemoryBytes)
      fail(readRefused('memory', `reading the ${what} needs more than ${mb} MiB`, maxMemoryBytes))
  }, MEMORY_EVERY_MS)
  return () => {
    clearTimeout(deadline)
    clearInterval(memory)
  }
}
