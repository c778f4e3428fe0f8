import { AppError } from '../kernel/errors.ts'

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

export const STATEMENT_READS: ReadGateOptions = {
  slots: 2,
  waiting: 4,
  waitMs: 30_000,
  retryAfterS: 15,
}

export interface ReadGate {
  /** Waits for a free read; resolves to the function that frees it again. */
  enter(signal?: AbortSignal): Promise<() => void>
  /** Reads running and waiting now. */
  load(): { running: number; waiting: number }
}

export function createReadGate(opts: ReadGateOptions): ReadGate {
  let running = 0
  const queue: Array<() => void> = []
  const release = () => {
    let freed = false
    return () => {
      if (freed) return
      freed = true
      const next = queue.shift()
      if (next) next()
      else running--
    }
  }
  const busy = () =>
    new AppError(
      'SERVICE_UNAVAILABLE',
      `mmp is busy reading other statements right now, so yours was not imported: nothing was saved; send the same file again in ${opts.retryAfterS} seconds`,
      { headers: { 'Retry-After': String(opts.retryAfterS) } },
    )
  return {
    load: () => ({ running, waiting: queue.length }),
    enter(signal) {
      if (running < opts.slots) {
        running++
        return Promise.resolve(release())
      }
      if (queue.length >= opts.waiting) return Promise.reject(busy())
      return new Promise((resolve, reject) => {
        const leave = (err: unknown) => {
          const at = queue.indexOf(go)
          if (at >= 0) queue.splice(at, 1)
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
      })
    },
  }
}

/** This process's statement reads (route and CLI imports alike). */
export const statementReads = createReadGate(STATEMENT_READS)
