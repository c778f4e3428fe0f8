import { AppError, invalidField } from '../kernel/errors.ts'

/**
 * What reading one statement PDF may cost (issue 32 item 7). A real statement is a few hundred
 * pages at most, a few thousand objects, shallow dictionaries; a file past these is refused with
 * a 422 naming the limit, before or while it is read, never by running the service out of memory
 * or time. Pages and structure are checked on the reading thread; time and memory by the thread
 * that started it (pdf-thread.ts), which ends the reading thread when either runs out.
 */
export interface PdfLimits {
  /** Pages of the document. */
  maxPages: number
  /** Indirect objects in the file (`n 0 obj`), counted before pdf.js parses it. */
  maxObjects: number
  /** Arrays and dictionaries inside each other. */
  maxNesting: number
  /** Wall-clock time for the whole read, in ms. */
  timeoutMs: number
  /** Memory the process may grow by while the PDF is read (inflated streams), in bytes. */
  maxMemoryBytes: number
}

export const DEFAULT_PDF_LIMITS: PdfLimits = {
  maxPages: 2000,
  maxObjects: 500_000,
  maxNesting: 100,
  timeoutMs: 60_000,
  maxMemoryBytes: 512 * 1024 * 1024,
}

export type ReadLimit = 'pages' | 'objects' | 'nesting' | 'time' | 'memory' | 'structure'

/**
 * A statement file refused for a limit (a PDF's pages, any read's time or memory): a 422
 * STATEMENT_TOO_LARGE whose detail and `limit` name it, or STATEMENT_UNREADABLE for a structure
 * pdf.js cannot walk (a loop in the page tree).
 */
export function readRefused(limit: ReadLimit, message: string, max?: number): AppError {
  const code = limit === 'structure' ? 'STATEMENT_UNREADABLE' : 'STATEMENT_TOO_LARGE'
  return new AppError(code, `file: ${message}`, {
    errors: [{ field: 'file', message }],
    extra: { limit, ...(max === undefined ? {} : { max }) },
  })
}

/** The bytes the structure scan stops at: `<`, `>`, `[`, `]`, `(` and `%`. */
const [LT, GT, LB, RB, PAREN, PERCENT] = Array.from('<>[](%', (c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
  number,
  number,
]

/**
 * Counts a PDF's objects and the depth of its arrays and dictionaries from its bytes, without
 * parsing it: literal strings, comments and stream contents are passed over (streams by their
 * `endstream`). pdf.js parses nested objects by recursion and keeps every object it meets, so a
 * file past either limit is refused here, in one pass of the bytes, before pdf.js sees it.
 * Compressed object streams hide their objects from this count; the page and memory limits
 * still hold for those.
 */
export function checkPdfStructure(bytes: Uint8Array, limits: PdfLimits): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let depth = 0
  let deepest = 0
  let objects = 0
  const n = buf.length
  for (let i = 0; i < n; i++) {
    const c = buf[i]!
    if (c === LB || (c === LT && buf[i + 1] === LT)) {
      if (c === LT) i++
      if (++depth > deepest) {
        deepest = depth
        if (deepest > limits.maxNesting) {
          throw readRefused(
            'nesting',
            `the PDF nests arrays or dictionaries more than ${limits.maxNesting} deep`,
            limits.maxNesting,
          )
        }
      }
    } else if (c === RB || (c === GT && buf[i + 1] === GT)) {
      if (c === GT) i++
      if (depth > 0) depth--
    } else if (c === LT) {
      const end = buf.indexOf(GT, i + 1)
      i = end < 0 ? n : end
    } else if (c === PAREN) {
      i = stringEnd(buf, i)
    } else if (c === PERCENT) {
      while (i < n && buf[i] !== 10 && buf[i] !== 13) i++
    } else if (c === 0x73 /* s */ && isWord(buf, i, 'stream')) {
      const end = buf.indexOf('endstream', i + 6)
      i = end < 0 ? n : end + 8
    } else if (c === 0x6f /* o */ && isWord(buf, i, 'obj')) {
      if (++objects > limits.maxObjects) {
        throw readRefused(
          'objects',
          `the PDF has more than ${limits.maxObjects} objects`,
          limits.maxObjects,
        )
      }
    }
  }
  // Every PDF, compressed object streams included, has indirect objects: without one, pdf.js
  // would rebuild a cross-reference table from the whole file for nothing.
  if (objects === 0)
    throw invalidField('file', 'the file is not a readable PDF (it holds no PDF objects)')
}

/** The index of the `)` closing the literal string opened at `i` (nested, escaped). */
function stringEnd(buf: Buffer, i: number): number {
  let open = 0
  for (; i < buf.length; i++) {
    const c = buf[i]
    if (c === 92) i++
    else if (c === PAREN) open++
    else if (c === 41 && --open === 0) return i
  }
  return i
}

const DELIM = new Set([32, 10, 13, 9, 12, 0, 40, 41, 60, 62, 91, 93, 47, 37, 123, 125])

/** `word` at `i`, standing alone (a keyword, not part of a name like /Objstm or endstream). */
function isWord(buf: Buffer, i: number, word: string): boolean {
  if (i > 0 && !DELIM.has(buf[i - 1]!)) return false
  for (let k = 0; k < word.length; k++) if (buf[i + k] !== word.charCodeAt(k)) return false
  const after = buf[i + word.length]
  return after === undefined || DELIM.has(after)
}
