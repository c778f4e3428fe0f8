import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createLogger } from '../kernel/log.ts'
import { unpackChunk } from './chunk-wire.ts'
import type { StatementChunk, StatementRead } from './statement-row.ts'
import type { FromWorker, ToWorker } from './statement-worker.ts'
import { readFile } from './statement-worker-read.ts'
import { fromWire } from './thread-wire.ts'

/**
 * The worker's module: beside this one when run from source; in the single executable, where
 * every module is bundled into one file at the embedded root, the build entry of its own
 * (scripts/build.ts) by its path from that root.
 */
function workerSpecifier(): string {
  const beside = new URL('./statement-worker.ts', import.meta.url)
  return existsSync(fileURLToPath(beside)) ? beside.href : './services/parser/statement-worker.ts'
}

const log = createLogger('parser')

/**
 * `streamStatement` on a thread of its own: a CSV statement is parsed there while this thread
 * stores the chunks already read, in order, one `onChunk` at a time. A chunk is acknowledged
 * once its `onChunk` is done, so the parser runs at most a few chunks ahead. An `onChunk` that
 * fails ends the thread and the read with its error; nothing after it is handed on. A worker
 * that cannot start (a binary built without its entry) leaves the file to this thread.
 */
export function streamStatementOnThread(
  file: Blob,
  opts: {
    timeZone: string
    now?: number
    /** Ends the thread and the read when aborted. */
    signal?: AbortSignal
    /** The file is a spreadsheet (spreadsheet.ts), not CSV text. */
    sheet?: boolean
    onChunk: (chunk: StatementChunk) => Promise<void> | void
    /** Make each transaction's id on the thread too (`StatementChunk.ids`). */
    ids?: boolean
  },
  specifier = workerSpecifier(),
): Promise<StatementRead> {
  const worker = new Worker(specifier)
  const send = (m: ToWorker) => worker.postMessage(m)
  return new Promise<StatementRead>((resolve, reject) => {
    let over = false
    let heard = false
    let queue = Promise.resolve()
    const end = (err: unknown, read?: StatementRead) => {
      if (over) return
      over = true
      worker.terminate()
      if (read) resolve(read)
      else reject(err)
    }
    worker.onmessage = (e: MessageEvent<FromWorker>) => {
      heard = true
      const m = e.data
      if ('chunk' in m) {
        queue = queue.then(async () => {
          if (over) return
          await opts.onChunk(unpackChunk(m.chunk))
          send({ ack: true })
        })
        queue.catch((err) => end(err))
      } else if ('done' in m) queue.then(() => end(null, m.done), end)
      else end(fromWire(m.error))
    }
    // A worker that ends without a word (it cannot, short of a crash) must not leave the read waiting.
    worker.addEventListener('close', () => end(new Error('the statement reading thread stopped')))
    worker.onerror = (e) => {
      e.preventDefault()
      if (heard || over) return end(new Error(e.message))
      over = true
      worker.terminate()
      log.warn('the statement reading thread could not start; parsing on this thread', {
        error: e.message,
      })
      readFile(file, opts).then(resolve, reject)
    }
    const abort = () => end(opts.signal?.reason ?? new Error('the statement import was stopped'))
    if (opts.signal?.aborted) return abort()
    opts.signal?.addEventListener('abort', abort, { once: true })
    send({
      file,
      timeZone: opts.timeZone,
      ids: opts.ids === true,
      now: opts.now,
      sheet: opts.sheet === true,
    })
  })
}
