import { numberText, serialDate, wallClock, xlsxString } from './spreadsheet-cells.ts'
import { attr, decodeXml, isSpace, XmlError, type XmlHandler, XmlScanner } from './xml-scan.ts'

/**
 * A worksheet's rows read as they stream (spreadsheet-xlsx.ts reads the workbook around them):
 * each `<row>` becomes an array of cell text by column (spreadsheet-cells.ts), handed to a sink.
 */

/** What of the workbook a sheet's cells need: the shared strings and which styles are dates. */
export interface SheetBook {
  strings: string[]
  /** For each cell style (`s`), whether its number format shows a date. */
  dates: boolean[]
  date1904: boolean
}

export interface XlsxLimits {
  /** Rows past this row number are refused with `tooMany('rows')`. */
  maxRows: number
  /** Shared strings past this count are refused with `tooMany('strings')`. */
  maxStrings: number
  tooMany: (what: 'rows' | 'strings') => Error
}

/** What a sheet's rows go to. `row` returns false when the rest of the sheet is not wanted. */
export interface SheetSink {
  row(cells: string[], rowNo: number): boolean
  /** Called between inflated pieces: the place to hand on what the rows made. */
  handOn(): Promise<void> | undefined | void
}

/**
 * Columns read, at most: Excel 2003's 256 (a statement has 14). A sheet may go on to XFD, but a
 * hostile one with a cell there in every row would make each row 16,384 cells to look through.
 */
export const MAX_COLUMNS = 256

/** A sheet's `<row>`s as arrays of cell text, by column, handed to the sink. */
export class SheetRows implements XmlHandler {
  stop = false
  private rowNo = 0
  private cells: string[] = []
  /** How many of `cells` are set (fewer than its length: holes to fill). */
  private filled = 0
  private col = -1
  private type = 'n'
  private style = 0
  private raw = ''
  private has = false
  private collect = false
  private inline = false
  private phonetic = 0
  /** A cell's content, when it is more than a value. */
  private readonly inner = new XmlScanner(this)

  constructor(
    private readonly sink: SheetSink,
    private readonly book: SheetBook,
    private readonly limits: XlsxLimits,
  ) {}

  open(name: string, tag: string): void {
    if (this.stop) return
    switch (name) {
      case 'c':
        this.cell(tag, 0, tag.length)
        break
      case 'v':
        this.collect = true
        this.has = true
        break
      case 'is':
        this.inline = true
        this.has = true
        break
      case 't':
        this.collect = this.inline && this.phonetic === 0
        break
      case 'rPh':
        this.phonetic++
        break
      case 'row': {
        const r = Number(attr(tag, 'r'))
        this.rowNo = r > 0 ? r : this.rowNo + 1
        if (this.rowNo > this.limits.maxRows) throw this.limits.tooMany('rows')
        this.cells = []
        this.filled = 0
        this.col = -1
      }
    }
  }

  /**
   * A whole `<c>`: most are `<v>value</v>` alone, read at once; anything else (inline strings,
   * formulas, rich text, CDATA) goes through the cell's own scan, tag by tag.
   */
  element(_name: string, src: string, tagFrom: number, tagTo: number, from: number, to: number) {
    if (this.stop) return
    this.cell(src, tagFrom, tagTo)
    const value = onlyValue(src, from, to, 118 /* v */)
    if (value !== undefined) {
      this.raw = value
      this.has = true
    } else {
      this.inner.write(src.slice(from, to))
      this.inner.end()
    }
    this.close('c')
  }

  close(name: string): void {
    if (this.stop) return
    switch (name) {
      case 'v':
      case 't':
        this.collect = false
        break
      case 'rPh':
        this.phonetic--
        break
      case 'is':
        this.inline = false
        break
      case 'c':
        if (this.has && this.col < MAX_COLUMNS) {
          if (this.cells[this.col] === undefined) this.filled++
          this.cells[this.col] = this.cellText()
        }
        break
      case 'row': {
        const cells = this.cells
        this.stop = !this.sink.row(
          this.filled === cells.length ? cells : Array.from(cells, (c) => c ?? ''),
          this.rowNo,
        )
      }
    }
  }

  text(raw: string): void {
    if (this.collect) this.raw = collected(this.raw, raw)
  }

  /**
   * A `<c>`'s reference, type and style. Its attributes are one-letter names, read in one pass
   * without cutting each name out: the hot loop of a sheet's million cells.
   */
  private cell(src: string, from: number, to: number): void {
    let col = this.col + 1
    this.type = 'n'
    this.style = 0
    for (let i = from; ; ) {
      // The next `=` inside the tag (a search past its end could run to the end of the piece).
      let eq = i
      while (eq < to && src.charCodeAt(eq) !== 61) eq++
      if (eq >= to) break
      let q = eq + 1
      while (isSpace(src.charCodeAt(q))) q++
      const quote = src.charCodeAt(q)
      if (quote !== 34 && quote !== 39) break
      const close = src.indexOf(quote === 34 ? '"' : "'", q + 1)
      if (close < 0 || close >= to) break
      let k = eq - 1
      while (isSpace(src.charCodeAt(k))) k--
      const before = src.charCodeAt(k - 1)
      if (isSpace(before) || before === 58 /* : */) {
        const name = src.charCodeAt(k)
        if (name === 114 /* r */) col = columnAt(src, q + 1)
        else if (name === 116 /* t */) this.type = cellType(src, q + 1, close)
        else if (name === 115 /* s */) this.style = numberAt(src, q + 1, close)
      }
      i = close + 1
    }
    this.col = col
    this.raw = ''
    this.has = false
  }

  /** The cell's value as statement text (spreadsheet-cells.ts). */
  private cellText(): string {
    const raw = this.raw
    switch (this.type) {
      case 's':
        return (this.book.strings[Number(raw)] ?? '').trim()
      case 'str':
      case 'inlineStr':
        return xlsxString(raw).trim()
      case 'b':
        return raw.trim() === '1' || raw.trim() === 'true' ? 'true' : 'false'
      case 'e':
        return decodeXml(raw).trim()
      case 'd': {
        const at = Date.parse(`${raw.trim().slice(0, 19)}Z`)
        return Number.isNaN(at) ? decodeXml(raw).trim() : wallClock(new Date(at))
      }
    }
    const text = raw.trim()
    const n = text === '' ? Number.NaN : Number(text)
    if (Number.isNaN(n)) return decodeXml(text)
    return this.book.dates[this.style] ? serialDate(n, this.book.date1904) : numberText(n)
  }
}

export const CELL: ReadonlySet<string> = new Set(['c'])
export const SHARED_STRING: ReadonlySet<string> = new Set(['si'])

/**
 * The raw text of content that is one `<name>` or `<name …>` element of text alone (no prefix,
 * no markup inside), or undefined when it is anything more.
 */
export function onlyValue(
  src: string,
  from: number,
  to: number,
  letter: number,
): string | undefined {
  // `<v` at the start and `</v>` (or `<t`, `</t>`) at the end.
  if (
    src.charCodeAt(from) !== 60 ||
    src.charCodeAt(from + 1) !== letter ||
    src.charCodeAt(to - 1) !== 62 ||
    src.charCodeAt(to - 2) !== letter ||
    src.charCodeAt(to - 3) !== 47 ||
    src.charCodeAt(to - 4) !== 60
  )
    return undefined
  const after = src.charCodeAt(from + 2)
  const gt = after === 62 ? from + 2 : isSpace(after) ? src.indexOf('>', from + 3) : -1
  if (gt < 0 || src.charCodeAt(gt - 1) === 47 || src.indexOf('<', gt) !== to - 4) return undefined
  return src.slice(gt + 1, to - 4)
}

/** A cell holds at most 32,767 characters; its XML, escaped, a few times that. */
const MAX_CELL_XML = 1024 * 1024

/** A cell's character data so far and a further run of it, bounded. */
export function collected(so: string, more: string): string {
  if (so.length + more.length > MAX_CELL_XML)
    throw new XmlError('a cell holds more text than a spreadsheet cell can')
  return so + more
}

/** The zero-based column of the cell reference (`AB12`) at `at`. */
function columnAt(src: string, at: number): number {
  let col = 0
  for (let i = at; ; i++) {
    const c = src.charCodeAt(i) | 0x20
    if (c < 97 || c > 122) break
    col = col * 26 + (c - 96)
    if (col > MAX_COLUMNS) break
  }
  return col - 1
}

/** A whole number written from `from` to `to` (a style index), 0 when it is not one. */
function numberAt(src: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const d = src.charCodeAt(i) - 48
    if (d < 0 || d > 9) return 0
    n = n * 10 + d
  }
  return n
}

/** A cell's `t` attribute as a constant string when it is a known type (no text cut out). */
function cellType(src: string, from: number, to: number): string {
  const first = src.charCodeAt(from)
  switch (to - from) {
    case 1:
      if (first === 115) return 's'
      if (first === 110) return 'n'
      if (first === 98) return 'b'
      if (first === 101) return 'e'
      if (first === 100) return 'd'
      break
    case 3:
      if (src.startsWith('str', from)) return 'str'
      break
    case 9:
      if (src.startsWith('inlineStr', from)) return 'inlineStr'
  }
  return src.slice(from, to)
}
