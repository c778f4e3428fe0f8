import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createLogger } from '../kernel/log.ts'
import { unpackChunk } from './chunk-wire.ts'
import { DEFAULT_PDF_LIMITS, pdfRefused } from './pdf-limits.ts'
import type { FromPdfWorker, ToPdfWorker } from './pdf-worker.ts'
import { type PdfReadOptions, readStatementPdf } from './statement-pdf.ts'
import type { StatementRead } from './statement-row.ts'
import { fromWire } from './thread-wire.ts'

/** How often the memory the read may grow by is checked, in ms. */
const MEMORY_EVERY_MS = 50

function workerSpecifier(): string {
  const beside = new URL('./pdf-worker.ts', import.meta.url)
  return existsSync(fileURLToPath(beside)) ? beside.href : './services/parser/pdf-worker.ts'
}

const log = createLogger('parser')

export interface PdfThreadOptions extends PdfReadOptions {
  /** Make each transaction's id on the thread (`StatementChunk.ids`). */
  ids?: boolean
  /** The caller gave up (a client that disconnected, its deadline): the reading thread ends. */
  signal?: AbortSignal
}

/**
 * `readStatementPdf` on a thread of its own, bounded (pdf-limits.ts): pages, objects and nesting
 * are checked there; here a deadline and the memory the process grows by while it reads (an
 * inflate bomb) end the thread, and so does `signal`. The service's own thread only unpacks and
 * stores chunks, so other tenants' requests are served meanwhile. Each chunk is acknowledged once
 * its `onChunk` is done, so the reader runs at most a few pages ahead. A thread that cannot start
 * (a binary built without its entry) leaves the file to this thread, still bounded by pages,
 * objects and nesting.
 */
export function readStatementPdfOnThread(
  file: Blob,
  opts: PdfThreadOptions,
  specifier = workerSpecifier(),
): Promise<StatementRead> {
  const limits = { ...DEFAULT_PDF_LIMITS, ...opts.limits }
  if (opts.signal?.aborted) return Promise.reject(opts.signal.reason)
  const worker = new Worker(specifier)
  const send = (m: ToPdfWorker) => worker.postMessage(m)
  return new Promise<StatementRead>((resolve, reject) => {
    let over = false
    let heard = false
    let queue = Promise.resolve()
    const rss0 = process.memoryUsage().rss
    const end = (err: unknown, read?: StatementRead) => {
      if (over) return
      over = true
      clearTimeout(deadline)
      clearInterval(memory)
      opts.signal?.removeEventListener('abort', aborted)
      worker.terminate()
      if (read) resolve(read)
      else reject(err)
    }
    const deadline = setTimeout(
      () =>
        end(
          pdfRefused(
            'time',
            `reading the PDF took longer than ${limits.timeoutMs / 1000} s`,
            limits.timeoutMs,
          ),
        ),
      limits.timeoutMs,
    )
    const memory = setInterval(() => {
      const grown = process.memoryUsage().rss - rss0
      if (grown > limits.maxMemoryBytes) {
        const mb = Math.round(limits.maxMemoryBytes / 2 ** 20)
        end(
          pdfRefused('memory', `reading the PDF needs more than ${mb} MiB`, limits.maxMemoryBytes),
        )
      }
    }, MEMORY_EVERY_MS)
    const aborted = () => end(opts.signal?.reason ?? new Error('the statement read was aborted'))
    opts.signal?.addEventListener('abort', aborted, { once: true })
    worker.onmessage = (e: MessageEvent<FromPdfWorker>) => {
      heard = true
      const m = e.data
      if ('chunk' in m) {
        queue = queue.then(async () => {
          if (over) return
          await opts.onChunk(unpackChunk(m.chunk))
          send({ ack: true })
        })
        queue.catch((err) => end(err))
      } else if ('page' in m) opts.onPage?.(m.page, m.pages)
      else if ('done' in m) queue.then(() => end(null, m.done), end)
      else end(fromWire(m.error))
    }
    worker.addEventListener('close', () => end(new Error('the PDF reading thread stopped')))
    worker.onerror = (e) => {
      e.preventDefault()
      if (heard || over) return end(new Error(e.message))
      over = true
      clearTimeout(deadline)
      clearInterval(memory)
      worker.terminate()
      log.warn('the PDF reading thread could not start; reading on this thread', {
        error: e.message,
      })
      readStatementPdf(file, opts).then(resolve, reject)
    }
    send({
      file,
      timeZone: opts.timeZone,
      password: opts.password,
      now: opts.now,
      ids: opts.ids === true,
      limits,
    })
  })
}

/** The reading thread's error as the kernel error it was, or a plain one. */
