import {
  isDateFormat,
  isDateFormatId,
  numberText,
  serialDate,
  wallClock,
  xlsxString,
} from './spreadsheet-cells.ts'
import { attr, decodeXml, isSpace, XmlError, type XmlHandler, XmlScanner } from './xml-scan.ts'
import { readPartText, type ZipPart } from './zip-parts.ts'

/**
 * An XLSX read as a stream (ECMA-376 SpreadsheetML): the workbook's sheet list, which styles
 * are dates and the shared strings are read first, then each sheet's rows in order, handed on
 * one at a time as they inflate. Only the shared strings are held whole; a sheet never is.
 */
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
const MAX_COLUMNS = 256

export class XlsxBook {
  private readonly byName = new Map<string, ZipPart>()

  constructor(
    private readonly file: Blob,
    parts: ZipPart[],
    private readonly limits: XlsxLimits,
  ) {
    for (const p of parts) this.byName.set(p.name.toLowerCase().replace(/^\//, ''), p)
  }

  private book: { strings: string[]; dates: boolean[]; date1904: boolean } | null = null

  /**
   * The workbook's worksheets in order (their parts' paths), after reading which styles are
   * dates and the shared strings; null when the zip holds no SpreadsheetML workbook.
   */
  async sheets(): Promise<string[] | null> {
    const root = (await this.relations('_rels/.rels', '')).find((r) => r.type === 'officeDocument')
    const workbook = root?.target ?? 'xl/workbook.xml'
    if (!this.part(workbook)) return null
    const rels = await this.relations(relsOf(workbook), dirOf(workbook))
    const ids: string[] = []
    let date1904 = false
    await this.scan(workbook, {
      open(name, tag) {
        if (name === 'sheet') ids.push(attr(tag, 'id') ?? '')
        else if (name === 'workbookPr') date1904 = /^(1|true)$/.test(attr(tag, 'date1904') ?? '')
      },
    })
    const target = (type: string) => rels.find((r) => r.type === type)?.target
    const dates = await this.dateStyles(target('styles'))
    const strings = await this.sharedStrings(target('sharedStrings'))
    this.book = { strings, dates, date1904 }
    return ids
      .map((id) => rels.find((r) => r.id === id && r.type === 'worksheet')?.target)
      .filter((path): path is string => path !== undefined && this.part(path) !== undefined)
  }

  /** A worksheet's rows, in order, to `sink` (after `sheets`). */
  async readSheet(path: string, sink: SheetSink): Promise<void> {
    if (!this.book) throw new Error('XlsxBook.readSheet before sheets()')
    await this.scan(path, new SheetRows(sink, this.book, this.limits), () => sink.handOn(), CELL)
  }

  private part(path: string): ZipPart | undefined {
    return this.byName.get(path.toLowerCase())
  }

  /** Streams a part through a handler; a handler that sets `stop` ends the read there. */
  private async scan(
    path: string,
    handler: Partial<XmlHandler> & { stop?: boolean },
    between?: () => Promise<void> | undefined | void,
    whole?: ReadonlySet<string>,
  ): Promise<void> {
    const part = this.part(path)
    if (!part) return
    const scanner = new XmlScanner(
      {
        open: handler.open?.bind(handler) ?? (() => {}),
        close: handler.close?.bind(handler) ?? (() => {}),
        text: handler.text?.bind(handler) ?? (() => {}),
        element: handler.element?.bind(handler),
      },
      whole,
    )
    let complete = true
    await readPartText(
      this.file,
      part,
      (text) => {
        scanner.write(text)
        if (handler.stop) complete = false
        return !handler.stop
      },
      between,
    )
    if (complete) scanner.end()
  }

  /** A relationships part: each relation's id, type (the last word of its URI) and target path. */
  private async relations(path: string, base: string) {
    const out: Array<{ id: string; type: string; target: string }> = []
    await this.scan(path, {
      open(name, tag) {
        if (name !== 'Relationship' || attr(tag, 'TargetMode') === 'External') return
        const type = attr(tag, 'Type') ?? ''
        out.push({
          id: attr(tag, 'Id') ?? '',
          type: type.slice(type.lastIndexOf('/') + 1),
          target: resolve(base, attr(tag, 'Target') ?? ''),
        })
      },
    })
    return out
  }

  /** For each cell style (`s`), whether its number format shows a date. */
  private async dateStyles(path: string | undefined): Promise<boolean[]> {
    const codes = new Map<number, string>()
    const ids: number[] = []
    let inCellXfs = false
    if (path)
      await this.scan(path, {
        open(name, tag) {
          if (name === 'numFmt')
            codes.set(Number(attr(tag, 'numFmtId')), attr(tag, 'formatCode') ?? '')
          else if (name === 'cellXfs') inCellXfs = true
          else if (name === 'xf' && inCellXfs) ids.push(Number(attr(tag, 'numFmtId') ?? 0))
        },
        close(name) {
          if (name === 'cellXfs') inCellXfs = false
        },
      })
    return ids.map((id) => {
      const code = codes.get(id)
      return code === undefined ? isDateFormatId(id) : isDateFormat(code)
    })
  }

  /** The shared strings, in order: each `<si>`'s text runs joined, phonetic runs left out. */
  private async sharedStrings(path: string | undefined): Promise<string[]> {
    const out: string[] = []
    if (!path) return out
    const limits = this.limits
    let raw = ''
    let inText = false
    let phonetic = 0
    const add = (text: string) => {
      if (out.length >= limits.maxStrings) throw limits.tooMany('strings')
      out.push(xlsxString(text))
    }
    const handler: Partial<XmlHandler> = {
      open(name) {
        if (name === 'si') raw = ''
        else if (name === 't') inText = phonetic === 0
        else if (name === 'rPh') phonetic++
      },
      close(name) {
        if (name === 't') inText = false
        else if (name === 'rPh') phonetic--
        else if (name === 'si') add(raw)
      },
      text(s) {
        if (inText) raw = collected(raw, s)
      },
    }
    // A whole `<si>`: most are one `<t>`, read at once; rich text goes through its own scan.
    const inner = new XmlScanner(handler as XmlHandler)
    handler.element = (_name, src, _tagFrom, _tagTo, from, to) => {
      const text = onlyValue(src, from, to, 116 /* t */)
      if (text !== undefined) return add(text)
      raw = ''
      inner.write(src.slice(from, to))
      inner.end()
      add(raw)
    }
    await this.scan(path, handler, undefined, SHARED_STRING)
    return out
  }
}

/** A sheet's `<row>`s as arrays of cell text, by column, handed to the sink. */
class SheetRows implements XmlHandler {
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
    private readonly book: { strings: string[]; dates: boolean[]; date1904: boolean },
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

const CELL: ReadonlySet<string> = new Set(['c'])
const SHARED_STRING: ReadonlySet<string> = new Set(['si'])

/**
 * The raw text of content that is one `<name>` or `<name …>` element of text alone (no prefix,
 * no markup inside), or undefined when it is anything more.
 */
function onlyValue(src: string, from: number, to: number, letter: number): string | undefined {
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
function collected(so: string, more: string): string {
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

const dirOf = (path: string) => path.slice(0, path.lastIndexOf('/') + 1)
const relsOf = (path: string) => `${dirOf(path)}_rels/${path.slice(path.lastIndexOf('/') + 1)}.rels`

/** A relationship's target as a path in the zip: absolute (`/xl/…`) or relative to `base`. */
function resolve(base: string, target: string): string {
  const parts = (target.startsWith('/') ? target.slice(1) : base + target).split('/')
  const out: string[] = []
  for (const p of parts) {
    if (p === '..') out.pop()
    else if (p !== '.' && p !== '') out.push(p)
  }
  return out.join('/')
}
