import { AppError, invalidField } from '../kernel/errors.ts'
import { readStatementPdfOnThread } from './pdf-thread.ts'
import { spreadsheetFormat } from './spreadsheet.ts'
import { isPdf } from './statement-pdf.ts'
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
 * Reads an M-Pesa statement file of any kind Safaricom hands out, chosen by its content (a
 * PDF starts `%PDF-`, a spreadsheet with its own signature; the name and type a browser sends
 * are not trusted): the emailed PDF, the CSV, or the business portal's XLS/XLSX export. Refuses with 422 a file whose detailed table it cannot find, naming the header it
 * expected and what the file had instead.
 */
export async function readStatement(
  file: Blob,
  opts: ReadOptions,
): Promise<StatementRead & { format: StatementFormat }> {
  const format = await statementFormat(file)
  const read =
    format === 'pdf'
      ? await readStatementPdfOnThread(file, opts)
      : await streamStatementOnThread(file, { ...opts, sheet: format === 'spreadsheet' })
  if (!read.headerFound) {
    const found = read.found ? `found "${read.found}"` : 'found no table'
    throw invalidField(
      'file',
      format === 'pdf'
        ? `the PDF is not an M-Pesa statement: expected a table headed "${EXPECTED_HEADER}", ${found}`
        : format === 'spreadsheet'
          ? `the spreadsheet holds no M-Pesa statement table: expected a row headed "${EXPECTED_HEADER}" (an org-portal export adds Initiation Time, Reason Type and more), ${found}`
          : `no M-Pesa statement header row was found: expected "${EXPECTED_HEADER}", ${found}`,
    )
  }
  return { ...read, format }
}

export type StatementFormat = 'pdf' | 'csv' | 'spreadsheet'

/**
 * What kind of statement file this is, from its first KiB: a PDF, a spreadsheet, or CSV text.
 * A file that is none of them (a photo, an archive, random bytes) is refused here, before any
 * reading thread starts or an upload waits for one (read-gate.ts).
 */
export async function statementFormat(file: Blob): Promise<StatementFormat> {
  if (await isPdf(file)) return 'pdf'
  if (await spreadsheetFormat(file)) return 'spreadsheet'
  await refuseBinary(file)
  return 'csv'
}

const PICTURES: Array<[string, number[]]> = [
  ['a JPEG photo', [0xff, 0xd8, 0xff]],
  ['a PNG picture', [0x89, 0x50, 0x4e, 0x47]],
  ['a GIF picture', [0x47, 0x49, 0x46, 0x38]],
  ['a HEIC photo', [0x00, 0x00, 0x00]],
]

/**
 * A file that is neither a PDF nor a spreadsheet nor text (a photo of a statement, an archive)
 * is refused in words, before a CSV reader turns its bytes into a garbled "header".
 */
async function refuseBinary(file: Blob): Promise<void> {
  const head = new Uint8Array(await file.slice(0, 1024).arrayBuffer())
  const picture = PICTURES.find(([, magic]) => magic.every((b, i) => head[i] === b))?.[0]
  const binary = picture ?? (head.includes(0) ? 'not a text file' : null)
  if (!binary) return
  throw new AppError(
    'STATEMENT_UNREADABLE',
    `the file is ${picture ?? 'binary, '}${picture ? '' : 'not a statement mmp can read'}: upload the statement PDF Safaricom emailed, its CSV, or the M-PESA business portal's CSV, XLS or XLSX export`,
    {
      errors: [
        {
          field: 'file',
          message: picture
            ? `${picture}, not a statement file`
            : 'not a text, PDF or spreadsheet file',
        },
      ],
    },
  )
}
