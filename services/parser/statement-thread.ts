import { type ReadBounds, runReadThread, workerSpecifier } from './read-thread.ts'
import type { StatementChunk, StatementRead } from './statement-row.ts'
import type { ToWorker } from './statement-worker.ts'
import { readFile } from './statement-worker-read.ts'

/**
 * What one CSV or spreadsheet read may cost: a 100,000-row statement takes a few seconds and
 * grows the process by under 300 MB, storing included.
 */
const STATEMENT_THREAD_BOUNDS: ReadBounds = {
  timeoutMs: 120_000,
  maxMemoryBytes: 512 * 1024 * 1024,
}

/**
 * `streamStatement` on a thread of its own (read-thread.ts): a CSV statement or a spreadsheet is
 * parsed there while this thread stores the chunks already read, in order, one `onChunk` at a
 * time. A read that runs past its time or grows the process past its memory bound ends with a
 * 422 naming the limit. A worker that cannot start (a binary built without its entry) leaves the
 * file to this thread.
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
    /** Overrides of the time and memory bounds (tests). */
    bounds?: Partial<ReadBounds>
  },
  specifier = workerSpecifier('statement-worker.ts'),
): Promise<StatementRead> {
  const start: ToWorker = {
    file,
    timeZone: opts.timeZone,
    ids: opts.ids === true,
    now: opts.now,
    sheet: opts.sheet === true,
  }
  return runReadThread({
    specifier,
    start,
    what: 'statement',
    keep: true,
    onChunk: opts.onChunk,
    signal: opts.signal,
    fallback: () => readFile(file, opts),
    bounds: { ...STATEMENT_THREAD_BOUNDS, ...opts.bounds },
  })
}
