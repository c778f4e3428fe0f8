import { AppError, invalidField } from '../kernel/errors.ts'
import {
  cellsOf,
  linesOf,
  lineText,
  PAGE_FURNITURE,
  type TableColumns,
  type TextPiece,
  tableColumnsOf,
} from './pdf-lines.ts'
import {
  isContinuation,
  joinDetails,
  newChunk,
  parseStatementRow,
  type StatementCells,
  type StatementChunk,
  type StatementRead,
} from './statement-row.ts'

/** Pages read looking for the detailed table's header before the file is refused. */
const MAX_PAGES_BEFORE_TABLE = 3
/** A wrapped Details line sits within this many line heights below the line above it. */
const WRAP_GAP = 2.2

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs')
let pdfjs: Promise<PdfJs> | null = null

/**
 * pdf.js loads on the first PDF, not at service start (it is a large module). Its worker runs
 * on this thread: handing pdf.js the worker module up front spares it a dynamic import by path,
 * which a compiled binary could not resolve.
 */
function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= (async () => {
    const g = globalThis as { pdfjsWorker?: unknown }
    g.pdfjsWorker ??= await import('pdfjs-dist/legacy/build/pdf.worker.mjs')
    return import('pdfjs-dist/legacy/build/pdf.mjs')
  })()
  return pdfjs
}

/** True when the file starts like a PDF (`%PDF-` within its first KiB, as readers allow). */
export async function isPdf(file: Blob): Promise<boolean> {
  const head = new TextDecoder('latin1').decode(await file.slice(0, 1024).arrayBuffer())
  return head.includes('%PDF-')
}

async function openPdf(file: Blob, password: string | undefined) {
  const { getDocument } = await loadPdfJs()
  const task = getDocument({
    data: new Uint8Array(await file.arrayBuffer()),
    password: password || undefined,
    // An upload is untrusted: no fonts installed, no system fonts looked up.
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  })
  try {
    return { task, doc: await task.promise }
  } catch (err) {
    await task.destroy().catch(() => {})
    const e = err as { name?: string; code?: number }
    if (e?.name === 'PasswordException') {
      throw e.code === 1 || !password
        ? new AppError(
            'STATEMENT_PASSWORD_REQUIRED',
            'the statement PDF is password-protected: send its password in the `password` field (Safaricom uses the ID number the statement was requested with)',
            { errors: [{ field: 'password', message: 'the PDF needs a password' }] },
          )
        : new AppError('STATEMENT_PASSWORD_INCORRECT', 'the password does not open this PDF', {
            errors: [{ field: 'password', message: 'the password does not open this PDF' }],
          })
    }
    throw invalidField('file', `the file is not a readable PDF (${(err as Error).message})`)
  }
}

const piecesOf = (items: unknown[]): TextPiece[] =>
  (items as Array<{ str?: string; transform?: number[]; width?: number }>)
    .filter((i) => i.str?.trim() && i.transform)
    .map((i) => ({
      text: i.str!,
      x: i.transform![4]!,
      y: i.transform![5]!,
      width: i.width ?? 0,
      size: Math.hypot(i.transform![2]!, i.transform![3]!) || 1,
    }))

/**
 * Reads Safaricom's M-PESA statement PDF page by page: only one page's text is held at a time and
 * `onChunk` (awaited) gets each page's rows. The preamble (customer, period, summary table) comes
 * before the detailed table's header and is ignored; pages that repeat the header or carry page
 * numbers and footers are read past. A line with only Details text right below a row continues
 * that row's Details. Rows then go through the same rules as a CSV statement's.
 */
export async function readStatementPdf(
  file: Blob,
  opts: {
    timeZone: string
    password?: string
    onChunk: (chunk: StatementChunk) => Promise<void> | void
    onPage?: (page: number, pages: number) => void
  },
): Promise<StatementRead> {
  const { task, doc } = await openPdf(file, opts.password)
  let table: TableColumns | null = null
  let held: { cells: StatementCells; row: number; y: number; size: number; page: number } | null =
    null
  let rows = 0
  let found: string | undefined
  let anyText = false
  const release = (out: StatementChunk) => {
    if (held) parseStatementRow(held.cells, held.row, opts.timeZone, out)
    held = null
  }
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n)
      const lines = linesOf(piecesOf((await page.getTextContent()).items))
      page.cleanup()
      anyText ||= lines.length > 0
      const out = newChunk()
      // A page that repeats the header starts its table below it; what is above is page header.
      let headerAt = -1
      for (let i = 0; i < lines.length && headerAt < 0; i++) {
        const columns = tableColumnsOf(lines[i]!)
        if (columns) {
          headerAt = i
          table ??= columns
        }
      }
      if (!table) {
        found ??= lines
          .find((l) => l.pieces.length >= 3)
          ?.pieces.map((p) => p.text.trim())
          .join(', ')
        // A statement's table starts on its first page, below the summary: a long document
        // without one by the third page is not a statement and is not read to its end.
        if (n >= MAX_PAGES_BEFORE_TABLE) break
        opts.onPage?.(n, doc.numPages)
        continue
      }
      let afterHeader = headerAt >= 0
      for (const line of lines.slice(Math.max(0, headerAt + 1))) {
        // Page numbers, footers and disclaimers are passed over without ending the held row: a
        // row's Details may still continue below the next page's header.
        const cells = PAGE_FURNITURE.test(lineText(line)) ? null : cellsOf(line, table)
        if (!cells) continue
        // Wrapped Details: right below its row, or the first lines under a repeated header when
        // a row's text ran over the page break.
        const near =
          held &&
          ((held.page === n && held.y - line.y <= WRAP_GAP * Math.max(held.size, line.size)) ||
            (held.page !== n && afterHeader))
        if (held && near && isContinuation(cells)) {
          joinDetails(held.cells, cells)
          held.y = line.y
          held.page = n
          continue
        }
        afterHeader = false
        release(out)
        if (isContinuation(cells)) continue
        held = { cells, row: ++rows, y: line.y, size: line.size, page: n }
      }
      await opts.onChunk(out)
      opts.onPage?.(n, doc.numPages)
    }
    const out = newChunk()
    release(out)
    await opts.onChunk(out)
  } finally {
    await task.destroy().catch(() => {})
  }
  if (!table && !anyText) found = '(no text: a scanned or photographed statement cannot be read)'
  return { headerFound: table !== null, rows, ...(found ? { found } : {}) }
}
