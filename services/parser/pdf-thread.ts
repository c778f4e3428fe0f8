import { DEFAULT_PDF_LIMITS } from './pdf-limits.ts'
import type { ToPdfWorker } from './pdf-worker.ts'
import { runReadThread, workerSpecifier } from './read-thread.ts'
import { type PdfReadOptions, readStatementPdf } from './statement-pdf.ts'
import type { StatementRead } from './statement-row.ts'

export interface PdfThreadOptions extends PdfReadOptions {
  /** Make each transaction's id on the thread (`StatementChunk.ids`). */
  ids?: boolean
  /** The caller gave up (a client that disconnected, its deadline): the reading thread ends. */
  signal?: AbortSignal
}

/**
 * `readStatementPdf` on a thread of its own (read-thread.ts), bounded (pdf-limits.ts): pages,
 * objects and nesting are checked there; here a deadline and the memory the process grows by while
 * it reads (an inflate bomb) end the thread, and so does `signal`. Each chunk is acknowledged once
 * its `onChunk` is done, so the reader runs at most a few pages ahead. A thread that cannot start
 * (a binary built without its entry) leaves the file to this thread, still bounded by pages,
 * objects and nesting.
 */
export function readStatementPdfOnThread(
  file: Blob,
  opts: PdfThreadOptions,
  specifier = workerSpecifier('pdf-worker.ts'),
): Promise<StatementRead> {
  const limits = { ...DEFAULT_PDF_LIMITS, ...opts.limits }
  const start: ToPdfWorker = {
    file,
    timeZone: opts.timeZone,
    password: opts.password,
    now: opts.now,
    ids: opts.ids === true,
    limits,
  }
  return runReadThread({
    specifier,
    start,
    what: 'PDF',
    onChunk: opts.onChunk,
    onPage: opts.onPage,
    signal: opts.signal,
    fallback: () => readStatementPdf(file, opts),
    bounds: limits,
  })
}
