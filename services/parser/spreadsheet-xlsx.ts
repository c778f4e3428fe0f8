import { isDateFormat, isDateFormatId, xlsxString } from './spreadsheet-cells.ts'
import {
  CELL,
  collected,
  onlyValue,
  SHARED_STRING,
  type SheetBook,
  SheetRows,
  type SheetSink,
  type XlsxLimits,
} from './spreadsheet-rows.ts'
import { attr, type XmlHandler, XmlScanner } from './xml-scan.ts'
import { readPartText, type ZipPart } from './zip-parts.ts'

export type { SheetSink, XlsxLimits } from './spreadsheet-rows.ts'

/**
 * An XLSX read as a stream (ECMA-376 SpreadsheetML): the workbook's sheet list, which styles
 * are dates and the shared strings are read first, then each sheet's rows in order, handed on
 * one at a time as they inflate (spreadsheet-rows.ts). Only the shared strings are held whole;
 * a sheet never is.
 */
export class XlsxBook {
  private readonly byName = new Map<string, ZipPart>()
  private book: SheetBook | null = null

  constructor(
    private readonly file: Blob,
    parts: ZipPart[],
    private readonly limits: XlsxLimits,
  ) {
    for (const p of parts) this.byName.set(p.name.toLowerCase().replace(/^\//, ''), p)
  }

  /**
   * The workbook's worksheets in order (their parts' paths), after reading which styles are
   * dates and the shared strings; null when the zip holds no SpreadsheetML workbook.
   */
  async sheets(): Promise<string[] | null> {
    const root = (await this.relations('_rels/.rels', '')).find((r) => r.type === 'officeDocument')
    const workbook = root?.target ?? 'xl/workbook.xml'
    // An XLSB's workbook is binary (`workbook.bin`): left to SheetJS, as an ODS is.
    if (!/\.xml$/i.test(workbook) || !this.part(workbook)) return null
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
        markup: handler.markup?.bind(handler),
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
