import { AppError } from '../kernel/errors.ts'
import { StatementReader } from './statement-reader.ts'
import { newChunk, type StatementChunk, type StatementRead } from './statement-row.ts'

/**
 * Org-portal (M-PESA business, G2) statements come as spreadsheets: XLSX, the older binary XLS,
 * or an HTML table saved as ".xls". SheetJS (`@e965/xlsx`, the npm publication of SheetJS CE
 * 0.20.3; npm's own `xlsx` stopped at 0.18.5 with two known advisories) reads all three. It reads
 * a workbook whole, so the file is bounded before it is opened: an XLSX's zip directory must
 * unpack to at most MAX_UNPACKED bytes in at most MAX_ENTRIES files, and at most MAX_ROWS rows are
 * read. The caller runs this on the statement thread (statement-worker.ts), never on the
 * service's event loop.
 */
export const MAX_UNPACKED = 256 * 1024 * 1024
export const MAX_ENTRIES = 5000
export const MAX_ROWS = 500_000
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
 * sizes its writer declared; an entry that inflates past its declared size fails the read in
 * SheetJS's inflater). Null when the directory cannot be found.
 */
export function zipDirectory(bytes: Uint8Array): { unpacked: number; entries: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  // The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
  let eocd = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      eocd = i
      break
    }
  }
  if (eocd < 0) return null
  const entries = view.getUint16(eocd + 10, true)
  let at = view.getUint32(eocd + 16, true)
  let unpacked = 0
  for (let n = 0; n < entries; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) return null
    const size = view.getUint32(at + 24, true)
    // 0xFFFFFFFF: a ZIP64 size, past any sane statement.
    unpacked += size === 0xffffffff ? Number.POSITIVE_INFINITY : size
    at +=
      46 +
      view.getUint16(at + 28, true) +
      view.getUint16(at + 30, true) +
      view.getUint16(at + 32, true)
  }
  return { unpacked, entries }
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
 * chunks of rows. Dates stored as spreadsheet dates are written back as `YYYY-MM-DD HH:MM:SS`
 * wall-clock text; numbers as plain decimals; text as it is.
 */
export async function readSpreadsheet(
  file: Blob,
  opts: {
    timeZone: string
    now?: number
    onChunk: (chunk: StatementChunk) => Promise<void> | void
  },
): Promise<StatementRead> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  const format = await spreadsheetFormat(file)
  if (format === 'xlsx') {
    const dir = zipDirectory(bytes)
    if (!dir) throw unreadable('its zip directory is damaged')
    if (dir.entries > MAX_ENTRIES) throw tooLarge(`more than ${MAX_ENTRIES} parts inside`)
    if (dir.unpacked > MAX_UNPACKED)
      throw tooLarge(`it unpacks to more than ${MAX_UNPACKED / 1024 / 1024} MiB`)
  }
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
    const reader = new StatementReader({ timeZone: opts.timeZone, now: opts.now })
    let out = newChunk()
    let pending = 0
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      if (!row) continue
      const cells = Array.from(row, (c) => textOf(XLSX, c))
      if (cells.every((c) => c === '')) continue
      reader.record(cells, r + 1, out)
      if (++pending >= CHUNK_ROWS) {
        await opts.onChunk(out)
        out = newChunk()
        pending = 0
      }
      // A sheet without the table's header in its first rows is not the statement.
      if (!reader.headerFound && r > 200) break
    }
    reader.flush(out)
    if (reader.headerFound) {
      await opts.onChunk(out)
      return reader.finish()
    }
    last ??= reader.finish()
  }
  return last ?? { headerFound: false, rows: 0, found: '(an empty workbook)' }
}

function unreadable(why: string): AppError {
  return new AppError('STATEMENT_UNREADABLE', `the spreadsheet cannot be read (${why})`, {
    errors: [{ field: 'file', message: why }],
  })
}

const pad = (n: number) => String(n).padStart(2, '0')
/** Day 0 of a spreadsheet's dates (1899-12-30, which absorbs Lotus's 1900 leap-day bug). */
const EXCEL_EPOCH = Date.UTC(1899, 11, 30)
const DAY_S = 86_400

/** A wall-clock time held in a Date's UTC fields, as statement text. */
const wallClock = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`

/** A cell as the text the statement reader reads. */
function textOf(XLSX: SheetJs, c: import('@e965/xlsx').CellObject | undefined): string {
  if (!c || c.v === undefined || c.v === null) return ''
  if (c.t === 'n' && typeof c.v === 'number') {
    if (c.z && XLSX.SSF.is_date(c.z))
      return wallClock(new Date(EXCEL_EPOCH + Math.round(c.v * DAY_S) * 1000))
    return Number.isInteger(c.v) ? String(c.v) : c.v.toFixed(2)
  }
  if (c.t === 'd' && c.v instanceof Date) return wallClock(c.v)
  if (c.t === 'b') return c.v ? 'true' : 'false'
  return String(c.v).trim()
}
