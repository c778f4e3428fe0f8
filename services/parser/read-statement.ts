import { invalidField } from '../kernel/errors.ts'
import { isPdf, readStatementPdf } from './statement-pdf.ts'
import { EXPECTED_HEADER, type StatementChunk, type StatementRead } from './statement-row.ts'
import { streamStatementOnThread } from './statement-thread.ts'

export interface ReadOptions {
  timeZone: string
  /** The clock's now (ms): rows dated more than a day after it are refused. */
  now?: number
  /** Stops reading when aborted (the client went away, its deadline passed). */
  signal?: AbortSignal
  /** Opens an encrypted PDF; a CSV ignores it. */
  password?: string
  onChunk: (chunk: StatementChunk) => Promise<void> | void
  /** CSV: make each transaction's id while reading (`StatementChunk.ids`), for rows to store. */
  ids?: boolean
  /** PDF only: called after each page, for progress. */
  onPage?: (page: number, pages: number) => void
}

/**
 * Reads an M-Pesa statement file of either kind Safaricom hands out, chosen by its content (a
 * PDF starts `%PDF-`; the name and type a browser sends are not trusted): the emailed PDF or
 * the CSV. Refuses with 422 a file whose detailed table it cannot find, naming the header it
 * expected and what the file had instead.
 */
export async function readStatement(
  file: Blob,
  opts: ReadOptions,
): Promise<StatementRead & { format: 'pdf' | 'csv' }> {
  const format = (await isPdf(file)) ? 'pdf' : 'csv'
  const read =
    format === 'pdf'
      ? await readStatementPdf(file, opts)
      : await streamStatementOnThread(file, opts)
  if (!read.headerFound) {
    const found = read.found ? `found "${read.found}"` : 'found no table'
    throw invalidField(
      'file',
      format === 'pdf'
        ? `the PDF is not an M-Pesa statement: expected a table headed "${EXPECTED_HEADER}", ${found}`
        : `no M-Pesa statement header row was found: expected "${EXPECTED_HEADER}", ${found}`,
    )
  }
  return { ...read, format }
}
