import { AppError } from '../kernel/errors.ts'
import { isDateFormat, numberText, serialDate, wallClock } from './spreadsheet-cells.ts'
import { MAX_COLUMNS } from './spreadsheet-rows.ts'
import { type SheetSink, XlsxBook, type XlsxLimits } from './spreadsheet-xlsx.ts'
import { StatementReader } from './statement-reader.ts'
import { newChunk, type StatementChunk, type StatementRead } from './statement-row.ts'
import { XmlError } from './xml-scan.ts'
import { ZipError, type ZipPart, zipParts } from './zip-parts.ts'

/**
 * Org-portal (M-PESA business, G2) statements come as spreadsheets: XLSX, the older binary XLS,
 * or an HTML table saved as ".xls". An XLSX is streamed (spreadsheet-xlsx.ts): its rows reach the
 * statement reader as its sheet inflates, so a 100,000-row statement is never held whole. The
 * older two are read whole by SheetJS (`@e965/xlsx`, the npm publication of SheetJS CE 0.20.3;
 * npm's own `xlsx` stopped at 0.18.5 with two known advisories), bounded by the upload's size.
 * An XLSX is bounded before it is opened: its zip directory must unpack to at most MAX_UNPACKED
 * bytes in at most MAX_ENTRIES parts, each part may not unpack past what the directory declares,
 * and at most MAX_ROWS rows are read. The caller runs this on the statement thread
 * (statement-worker.ts), never on the service's event loop.
 */
export const MAX_UNPACKED = 256 * 1024 * 1024
export const MAX_ENTRIES = 5000
export const MAX_ROWS = 500_000
/** Shared strings (distinct texts) an XLSX may hold: a statement's 500,000 rows need fewer. */
export const MAX_STRINGS = 4_000_000
/**
 * Bytes of a legacy XLS or an HTML ".xls" read whole by SheetJS, which needs about twenty times
 * a file's size in memory; a legacy XLS holds at most 65,536 rows a sheet, well under this.
 */
export const MAX_WHOLE_BYTES = 10 * 1024 * 1024
/** Rows handed on per chunk. */
const CHUNK_ROWS = 5000

export type SheetFormat = 'xlsx' | 'xls' | 'html'

/** What kind of spreadsheet a file is, from its first bytes (the name is not trusted). */
export async function spreadsheetFormat(file: Blob): Promise<SheetFormat | null> {
  const head = new Uint8Array(await file.slice(0, 512).arrayBuffer())
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return 'xlsx'
  const cfb = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]
  if (cfb.every((b, i) => head[i] === b)) return 'xls'
  const text = new TextDecoder('latin1').decode(head).trimStart().toLowerCase()
  if (/^(<\?xml[^>]*>\s*)?(<!doctype html|<html|<table|<meta)/.test(text)) return 'html'
  return null
}

/**
 * The bytes a zip's entries unpack to and how many there are, from its central directory (the
 * sizes its writer declared; a part that inflates past its declared size stops the read,
 * zip-parts.ts). Null when the directory cannot be found.
 */
export async function zipDirectory(
  file: Blob,
): Promise<{ unpacked: number; entries: number } | null> {
  const parts = await zipParts(file)
  if (!parts) return null
  return { unpacked: parts.reduce((sum, p) => sum + p.size, 0), entries: parts.length }
}

const tooLarge = (what: string) =>
  new AppError('STATEMENT_TOO_LARGE', `the spreadsheet is too large to read: ${what}`, {
    errors: [{ field: 'file', message: what }],
  })

type SheetJs = typeof import('@e965/xlsx')
let sheetjs: Promise<SheetJs> | null = null
/** SheetJS loads on the first spreadsheet, not at service start (it is a large module). */
const loadSheetJs = () => {
  sheetjs ??= import('@e965/xlsx')
  return sheetjs
}

/**
 * Reads the first sheet that holds an M-Pesa statement table through the statement reader, in
 * chunks of rows (spreadsheet-cells.ts says how cells become text). An XLSX is read as a stream
 * (spreadsheet-xlsx.ts); the older XLS, an HTML ".xls" and any other zip workbook (XLSB, ODS)
 * whole by SheetJS, bounded by the upload's size.
 */
export async function readSpreadsheet(
  file: Blob,
  opts: {
    timeZone: string
    now?: number
    onChunk: (chunk: StatementChunk) => Promise<void> | void
  },
): Promise<StatementRead> {
  const format = await spreadsheetFormat(file)
  if (format === 'xlsx') {
    const parts = await zipParts(file)
    if (!parts) throw unreadable('its zip directory is damaged')
    if (parts.length > MAX_ENTRIES) throw tooLarge(`more than ${MAX_ENTRIES} parts inside`)
    if (parts.reduce((sum, p) => sum + p.size, 0) > MAX_UNPACKED)
      throw tooLarge(`it unpacks to more than ${MAX_UNPACKED / 1024 / 1024} MiB`)
    const read = await readXlsx(file, parts, opts)
    if (read) return read
  }
  if (file.size > MAX_WHOLE_BYTES)
    throw tooLarge(
      `an ${format === 'html' ? 'HTML' : format === 'xls' ? 'XLS' : 'other'} spreadsheet over ${MAX_WHOLE_BYTES / 1024 / 1024} MiB is not read: export the statement as CSV or XLSX instead`,
    )
  return readWithSheetJs(new Uint8Array(await file.arrayBuffer()), opts)
}

type ReadOpts = Parameters<typeof readSpreadsheet>[1]

const LIMITS: XlsxLimits = {
  maxRows: MAX_ROWS,
  maxStrings: MAX_STRINGS,
  tooMany: (what) =>
    tooLarge(what === 'rows' ? `more than ${MAX_ROWS} rows` : `more than ${MAX_STRINGS} texts`),
}

/** An XLSX streamed sheet by sheet; null when the zip is not a SpreadsheetML workbook. */
async function readXlsx(
  file: Blob,
  parts: ZipPart[],
  opts: ReadOpts,
): Promise<StatementRead | null> {
  try {
    const book = new XlsxBook(file, parts, LIMITS)
    const sheets = await book.sheets()
    if (!sheets) return null
    let last: StatementRead | null = null
    for (const path of sheets) {
      const sheet = new StatementSheet(opts)
      await book.readSheet(path, sheet)
      const read = await sheet.finish()
      if (read.headerFound) return read
      last ??= read
    }
    return last ?? { headerFound: false, rows: 0, found: '(an empty workbook)' }
  } catch (err) {
    if (err instanceof ZipError || err instanceof XmlError) throw unreadable(err.message)
    throw err
  }
}

/** A legacy XLS, an HTML table or another zip workbook, read whole by SheetJS. */
async function readWithSheetJs(bytes: Uint8Array, opts: ReadOpts): Promise<StatementRead> {
  const XLSX = await loadSheetJs()
  let book: import('@e965/xlsx').WorkBook
  try {
    book = XLSX.read(bytes, {
      type: 'array',
      dense: true,
      sheetRows: MAX_ROWS + 1,
      cellFormula: false,
      // Number formats tell a date cell from an amount.
      cellNF: true,
      cellHTML: false,
      cellStyles: false,
      bookVBA: false,
    })
  } catch (err) {
    throw unreadable((err as Error).message)
  }
  let last: StatementRead | null = null
  for (const name of book.SheetNames) {
    const sheet = book.Sheets[name]
    if (!sheet) continue
    const rows = (sheet['!data'] ?? []) as Array<
      Array<import('@e965/xlsx').CellObject | undefined> | undefined
    >
    if (rows.length > MAX_ROWS) throw tooLarge(`more than ${MAX_ROWS} rows`)
    const out = new StatementSheet(opts)
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      if (!row) continue
      // A hostile sheet with a cell far right in every row is read to the same columns as an XLSX.
      const cells = row.length > MAX_COLUMNS ? row.slice(0, MAX_COLUMNS) : row
      if (!out.row(Array.from(cells, textOf), r + 1)) break
      await out.handOn()
    }
    const read = await out.finish()
    if (read.headerFound) return read
    last ??= read
  }
  return last ?? { headerFound: false, rows: 0, found: '(an empty workbook)' }
}

/**
 * One sheet's rows through the statement reader, handed on in chunks. A sheet without the
 * table's header in its first 201 rows is not the statement: the rest of it is not wanted.
 */
class StatementSheet implements SheetSink {
  private readonly reader: StatementReader
  private out = newChunk()
  private pending = 0

  constructor(private readonly opts: ReadOpts) {
    this.reader = new StatementReader({ timeZone: opts.timeZone, now: opts.now })
  }

  row(cells: string[], rowNo: number): boolean {
    if (cells.every((c) => c === '')) return true
    this.reader.record(cells, rowNo, this.out)
    this.pending++
    return this.reader.headerFound || rowNo <= 201
  }

  handOn(): Promise<void> | void {
    if (this.pending < CHUNK_ROWS) return
    const out = this.out
    this.out = newChunk()
    this.pending = 0
    return this.opts.onChunk(out)
  }

  /** What the sheet was; its last rows are handed on when it holds the statement. */
  async finish(): Promise<StatementRead> {
    this.reader.flush(this.out)
    if (this.reader.headerFound) await this.opts.onChunk(this.out)
    return this.reader.finish()
  }
}

function unreadable(why: string): AppError {
  return new AppError('STATEMENT_UNREADABLE', `the spreadsheet cannot be read (${why})`, {
    errors: [{ field: 'file', message: why }],
  })
}

/** A SheetJS cell as the text the statement reader reads. */
function textOf(c: import('@e965/xlsx').CellObject | undefined): string {
  if (!c || c.v === undefined || c.v === null) return ''
  if (c.t === 'n' && typeof c.v === 'number')
    return c.z && isDateFormat(String(c.z)) ? serialDate(c.v) : numberText(c.v)
  if (c.t === 'd' && c.v instanceof Date) return wallClock(c.v)
  if (c.t === 'b') return c.v ? 'true' : 'false'
  return String(c.v).trim()
}
