import { cellTag, MAX_COLUMNS, plain, plainContent, readCellTag } from './spreadsheet-cell-tag.ts'
import { numberText, serialDate, wallClock, xlsxString } from './spreadsheet-cells.ts'
import {
  attr,
  decodeXml,
  isSpace,
  tagEnd,
  XmlError,
  type XmlHandler,
  XmlScanner,
} from './xml-scan.ts'

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

export { MAX_COLUMNS } from './spreadsheet-cell-tag.ts'

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
   * A `<c>` at `lt` whose content is one text alone (`<v>` or an inline string), read at once:
   * most of a sheet's cells. Anything else is left to the scanner (0).
   */
  markup(src: string, lt: number): number {
    if (this.stop) return 0
    const name = src.charCodeAt(lt + 1)
    if (name === 114 /* r */) return this.wholeRow(src, lt)
    if (name !== 99 /* c */) return 0
    const after = src.charCodeAt(lt + 2)
    if (!isSpace(after) && after !== 62) return 0
    const gt = readCellTag(src, lt + 2, src.length, this.col + 1)
    if (gt < 0) return 0
    const empty = src.charCodeAt(gt - 1) === 47 /* <c …/> */
    if (!empty && !plainContent(src, gt + 1)) return 0
    this.tagRead()
    if (empty) return gt + 1
    this.raw = src.slice(plain.from, plain.to)
    this.has = true
    this.close('c')
    return plain.end
  }

  /**
   * A whole `<row>…</row>` that is all in this piece and holds common cells alone (as `markup`
   * reads them, whitespace between them allowed), read in one loop with nothing kept until its
   * end: a sheet's rows nearly all are. Anything else (a row cut between pieces, `<row/>`, a
   * formula or rich text in a cell) is left to the scanner (0), which reads it tag by tag; each
   * `<row>` is tried once, so a row is looked through at most twice.
   */
  private wholeRow(src: string, lt: number): number {
    if (src.charCodeAt(lt + 2) !== 111 || src.charCodeAt(lt + 3) !== 119) return 0
    const after = src.charCodeAt(lt + 4)
    if (!isSpace(after) && after !== 62) return 0
    const gt = tagEnd(src, lt + 4)
    if (gt < 0 || src.charCodeAt(gt - 1) === 47 /* <row …/> */) return 0
    const r = rowNumber(src, lt + 4, gt)
    const rowNo = r > 0 ? r : this.rowNo + 1
    const n = src.length
    const cells: string[] = []
    let filled = 0
    let col = -1
    let at = gt + 1
    for (;;) {
      while (isSpace(src.charCodeAt(at))) at++
      if (at >= n || src.charCodeAt(at) !== 60) return 0
      const c = src.charCodeAt(at + 1)
      if (c === 47 /* </ */) {
        if (!src.startsWith('row>', at + 2)) return 0
        break
      }
      if (c !== 99 /* c */) return 0
      const a = src.charCodeAt(at + 2)
      if (!isSpace(a) && a !== 62 && a !== 47) return 0
      const cellGt = readCellTag(src, at + 2, n, col + 1)
      if (cellGt < 0) return 0
      col = cellTag.col
      if (src.charCodeAt(cellGt - 1) === 47 /* <c …/> */) {
        at = cellGt + 1
        continue
      }
      if (!plainContent(src, cellGt + 1)) return 0
      if (col < MAX_COLUMNS) {
        if (cells[col] === undefined) filled++
        cells[col] = this.textOf(src.slice(plain.from, plain.to), cellTag.type, cellTag.style)
      }
      at = plain.end
    }
    if (rowNo > this.limits.maxRows) throw this.limits.tooMany('rows')
    this.rowNo = rowNo
    this.cells = cells
    this.filled = filled
    this.col = col
    this.close('row')
    return at + 6
  }

  /** A `<c>`'s reference, type and style (`readCellTag`), its value not yet read. */
  private cell(src: string, from: number, to: number): void {
    readCellTag(src, from, to, this.col + 1)
    this.tagRead()
  }

  private tagRead(): void {
    this.col = cellTag.col
    this.type = cellTag.type
    this.style = cellTag.style
    this.raw = ''
    this.has = false
  }

  /** The cell's value as statement text (spreadsheet-cells.ts). */
  private cellText(): string {
    return this.textOf(this.raw, this.type, this.style)
  }

  private textOf(raw: string, type: string, style: number): string {
    switch (type) {
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
    return this.book.dates[style] ? serialDate(n, this.book.date1904) : numberText(n)
  }
}

export const CELL: ReadonlySet<string> = new Set(['c'])

/** A `<row>` tag's `r` (from `from`, after its name, to its `>` at `to`): read at once when it comes first. */
function rowNumber(src: string, from: number, to: number): number {
  if (src.startsWith(' r="', from)) {
    let n = 0
    let i = from + 4
    for (let d = src.charCodeAt(i) - 48; d >= 0 && d <= 9; d = src.charCodeAt(++i) - 48)
      n = n * 10 + d
    if (src.charCodeAt(i) === 34 && i > from + 4) return n
  }
  return Number(attr(src.slice(from, to), 'r'))
}
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
