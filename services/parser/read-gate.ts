import { AppError } from '../kernel/errors.ts'
import { counter, gauge } from '../kernel/metrics.ts'

/**
 * How many statement files one process reads at once. Each read runs on a thread of its own
 * and may grow the process by up to its memory bound (read-thread.ts), so eight uploads at once
 * would need eight times that: past `slots` reads, an upload waits (it is already on disk, so
 * waiting costs no memory) until a read ends, at most `waiting` of them for at most `waitMs`;
 * any more, or one that waited too long, is answered 503 with Retry-After.
 */
export interface ReadGateOptions {
  slots: number
  waiting: number
  waitMs: number
  /** Seconds a refused client is asked to wait before sending the file again. */
  retryAfterS: number
}

/** Statement reads the whole platform runs at once: `mmp serve`'s workers share them. */
export const PLATFORM_READS = 2

/**
 * A process's share of PLATFORM_READS: all of them in a single process, and split among the
 * workers of `mmp serve --workers N` (each worker has its own gate), at least one each. Two
 * workers read one statement each, not two: a platform's reads, and the memory they may take,
 * do not grow with its number of workers beyond one a worker.
 */
export function readSlots(workers: number): number {
  if (!Number.isInteger(workers) || workers < 1) return PLATFORM_READS
  return Math.max(1, Math.floor(PLATFORM_READS / workers))
}

export const STATEMENT_READS: ReadGateOptions = {
  slots: PLATFORM_READS,
  waiting: 4,
  waitMs: 30_000,
  retryAfterS: 15,
}

/** Takes this process's share of the platform's reads (the parser does as it starts). */
export function shareStatementReads(workers: number): void {
  STATEMENT_READS.slots = readSlots(workers)
  readSlotsNow.set(STATEMENT_READS.slots)
}

export interface ReadGate {
  /** Waits for a free read; resolves to the function that frees it again. */
  enter(signal?: AbortSignal): Promise<() => void>
  /** Reads running and waiting now. */
  load(): { running: number; waiting: number }
}

/** What a gate tells its watcher (`/metrics`): every change of its load, and every refusal. */
export interface ReadGateWatcher {
  load(running: number, waiting: number): void
  refused(): void
}

export function createReadGate(opts: ReadGateOptions, watcher?: ReadGateWatcher): ReadGate {
  let running = 0
  const queue: Array<() => void> = []
  const changed = () => watcher?.load(running, queue.length)
  const release = () => {
    let freed = false
    return () => {
      if (freed) return
      freed = true
      const next = queue.shift()
      if (next) next()
      else running--
      changed()
    }
  }
  const busy = () => {
    watcher?.refused()
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `mmp is busy reading other statements right now, so yours was not imported: nothing was saved; send the same file again in ${opts.retryAfterS} seconds`,
      { headers: { 'Retry-After': String(opts.retryAfterS) } },
    )
  }
  return {
    load: () => ({ running, waiting: queue.length }),
    enter(signal) {
      if (running < opts.slots) {
        running++
        changed()
        return Promise.resolve(release())
      }
      if (queue.length >= opts.waiting) return Promise.reject(busy())
      return new Promise((resolve, reject) => {
        const leave = (err: unknown) => {
          const at = queue.indexOf(go)
          if (at >= 0) queue.splice(at, 1)
          changed()
          clearTimeout(timer)
          signal?.removeEventListener('abort', aborted)
          reject(err)
        }
        // A read ended and hands its place on: `running` stays as it was.
        const go = () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', aborted)
          resolve(release())
        }
        const aborted = () => leave(signal?.reason ?? new Error('the upload was stopped'))
        const timer = setTimeout(() => leave(busy()), opts.waitMs)
        signal?.addEventListener('abort', aborted, { once: true })
        queue.push(go)
        changed()
      })
    },
  }
}

const readsNow = gauge(
  'mmp_statement_reads',
  'Statement reads running, and uploads waiting for one, in this process',
  ['state'],
)
const readsMost = gauge(
  'mmp_statement_reads_most',
  'The most statement reads that ran at once in one process since it started',
)
const readsRefused = counter(
  'mmp_statement_reads_refused_total',
  'Statement uploads answered 503 because every read and waiting place was taken',
)
const readSlotsNow = gauge(
  'mmp_statement_read_slots',
  "Statement reads this process may run at once: its share of the platform's",
)
readSlotsNow.set(STATEMENT_READS.slots)
let most = 0

/** This process's statement reads (route and CLI imports alike). */
export const statementReads = createReadGate(STATEMENT_READS, {
  load(running, waiting) {
    readsNow.set({ state: 'running' }, running)
    readsNow.set({ state: 'waiting' }, waiting)
    if (running > most) {
      most = running
      readsMost.set(most)
    }
  },
  refused: () => readsRefused.inc(),
})
