import { readSpreadsheet } from './spreadsheet.ts'
import { streamStatement } from './statement.ts'
import type { StatementChunk, StatementRead } from './statement-row.ts'

/** What the statement thread reads a file with: a spreadsheet (an XLSX as a stream), CSV text as a stream. */
export function readFile(
  file: Blob,
  opts: {
    timeZone: string
    now?: number
    sheet?: boolean
    onChunk: (chunk: StatementChunk) => Promise<void> | void
  },
): Promise<StatementRead> {
  return opts.sheet ? readSpreadsheet(file, opts) : streamStatement(file.stream(), opts)
}
