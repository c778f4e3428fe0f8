import { AppError, invalidField } from '../kernel/errors.ts'
import { checkPdfStructure, DEFAULT_PDF_LIMITS, type PdfLimits, readRefused } from './pdf-limits.ts'
import { findHeader, type Line, linesOf, type TextPiece } from './pdf-lines.ts'
import { PdfRows } from './pdf-rows.ts'
import { StatementReader } from './statement-reader.ts'
import { newChunk, type StatementChunk, type StatementRead } from './statement-row.ts'

/** Pages read looking for the detailed table's header before the file is refused. */
const MAX_PAGES_BEFORE_TABLE = 3

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

async function openPdf(data: Uint8Array, password: string | undefined) {
  const { getDocument } = await loadPdfJs()
  const task = getDocument({
    data,
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

export interface PdfReadOptions {
  timeZone: string
  password?: string
  /** The reader's idea of now (ms), for the dates-ahead check; tests move it. */
  now?: number
  onChunk: (chunk: StatementChunk) => Promise<void> | void
  onPage?: (page: number, pages: number) => void
  /** Pages, objects and nesting (pdf-limits.ts); time and memory are the thread's to bound. */
  limits?: Partial<PdfLimits>
}

/**
 * Reads an M-PESA statement PDF page by page through the statement reader (statement-reader.ts):
 * only one page's text is held at a time and `onChunk` (awaited) gets each page's rows. Lines
 * above the detailed table's header (the preamble, the SUMMARY table) are the reader's text, for
 * the layout and its totals; the header's geometry gives the columns (pdf-lines.ts), and rows are
 * rebuilt from the lines below it, wrapped text and page breaks included (pdf-rows.ts). Refuses a
 * file past its limits (pdf-limits.ts) with a 422 naming the limit.
 */
export async function readStatementPdf(file: Blob, opts: PdfReadOptions): Promise<StatementRead> {
  const limits = { ...DEFAULT_PDF_LIMITS, ...opts.limits }
  const data = new Uint8Array(await file.arrayBuffer())
  checkPdfStructure(data, limits)
  const { task, doc } = await openPdf(data, opts.password)
  const reader = new StatementReader({ timeZone: opts.timeZone, now: opts.now })
  let rows: PdfRows | null = null
  let anyText = false
  try {
    const pages = doc.numPages
    if (pages > limits.maxPages) {
      throw readRefused(
        'pages',
        `the PDF has ${pages} pages, more than the ${limits.maxPages} a statement may have`,
        limits.maxPages,
      )
    }
    for (let n = 1; n <= pages; n++) {
      const lines = await pageLines(doc, n)
      anyText ||= lines.length > 0
      const out = newChunk()
      const header = findHeader(lines)
      if (!rows) {
        const before = header ? lines.slice(0, header.first) : lines
        for (const l of before) reader.text(l.pieces.map((p) => p.text))
        if (!header) {
          // A statement's table starts on its first pages, below the summary: a long document
          // without one by the third page is not a statement and is not read to its end.
          opts.onPage?.(n, pages)
          if (n >= MAX_PAGES_BEFORE_TABLE) break
          continue
        }
        reader.header(header.labels)
        rows = new PdfRows(reader, header.table)
      }
      // A page that repeats the header starts its table below it; what is above is page header.
      rows.page(header ? lines.slice(header.last + 1) : lines, out)
      await opts.onChunk(out)
      opts.onPage?.(n, pages)
    }
    const out = newChunk()
    rows?.emit(out)
    reader.flush(out)
    await opts.onChunk(out)
  } finally {
    await task.destroy().catch(() => {})
  }
  const read = reader.finish()
  if (!read.headerFound && !anyText) {
    return { ...read, found: '(no text: a scanned or photographed statement cannot be read)' }
  }
  return read
}

type PdfDoc = Awaited<ReturnType<typeof openPdf>>['doc']

/** One page's text as lines; a page pdf.js cannot build (a loop in the page tree) refuses the file. */
async function pageLines(doc: PdfDoc, n: number): Promise<Line[]> {
  try {
    const page = await doc.getPage(n)
    const lines = linesOf(piecesOf((await page.getTextContent()).items))
    page.cleanup()
    return lines
  } catch (err) {
    throw readRefused(
      'structure',
      `page ${n} of the PDF cannot be read (${(err as Error).message})`,
    )
  }
}
