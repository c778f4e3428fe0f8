import { describe, expect, it } from 'bun:test'
import { cellTag, plain, plainContent, readCellTag } from './spreadsheet-cell-tag.ts'
import { CELL, SheetRows } from './spreadsheet-rows.ts'
import { XmlScanner } from './xml-scan.ts'

/**
 * A sheet's common cells are read straight off the text (spreadsheet-cell-tag.ts), the rest tag
 * by tag: both ways must give the same rows, wherever the sheet's text is cut into pieces.
 */
const SHEET = [
  '<sheetData>',
  '<row r="1"><c r="A1" t="str"><v>Receipt No.</v></c><c r="B1" t="inlineStr"><is><t>Details</t></is></c></row>',
  '<row r="2"><c r="A2" t="str"><v>RBK1AAAAA1</v></c><c r="B2" t="inlineStr"><is><t xml:space="preserve"> Paid &amp; kept </t></is></c>',
  '<c r="C2" s="1"><v>43525.5</v></c><c r="D2" s="2"/><c r="E2"><v>-10.5</v></c><c r="F2" t="s"><v>1</v></c></row>',
  '<row r="3"><c r="B3" t="str"><v></v></c><c r = "C3"  t=\'str\' ><v>a_x000D_b</v></c><c r="E3" t="b"><v>1</v></c>',
  '<c r="F3" t="inlineStr"><is><r><t>rich</t></r><r><t> text</t></r></is></c><c t="e"><v>#N/A</v></c>',
  '<c r="H3" t="str"><f>A1</f><v>formula</v></c><c r="I3" t="inlineStr"><is><t>x</t><rPh><t>y</t></rPh></is></c></row>',
  '<row><c><v>7</v></c><c/><c t="str"><v>after empty</v></c><c r="E4" t="n"><v>2.25</v></c></row>',
  '<row r="6"><c r="A6" t="inlineStr"><is><t><![CDATA[<cdata>]]></t></is></c><c r="B6" t="d"><v>2023-03-02T12:00:00</v></c></row>',
  '<row r="7" spans="1:3" ht="15">\n  <c r="A7" t="s"><v>0</v></c>\n  <c r="C7"><v>3</v></c>\n</row><row r="8"/>',
  '<row spans="1:2" r="9"><c r="B9" t="str" cm="1"><v>late r</v></c></row ><row r="10"><c r="A10"><v>1</v></c></row>',
  '</sheetData>',
].join('')

const BOOK = { strings: ['zero', ' one '], dates: [false, true, false], date1904: false }
const LIMITS = { maxRows: 100, maxStrings: 100, tooMany: () => new Error('too many') }

/** The sheet's rows read from `pieces`; `fast` false reads every cell tag by tag. */
function rowsOf(pieces: string[], fast: boolean): Array<[number, string[]]> {
  const rows: Array<[number, string[]]> = []
  const sheet = new SheetRows(
    { row: (cells, n) => rows.push([n, cells]) > 0, handOn: () => {} },
    BOOK,
    LIMITS,
  )
  const handler = {
    open: sheet.open.bind(sheet),
    close: sheet.close.bind(sheet),
    text: sheet.text.bind(sheet),
    element: sheet.element.bind(sheet),
    ...(fast ? { markup: sheet.markup.bind(sheet) } : {}),
  }
  const scanner = new XmlScanner(handler, CELL)
  for (const p of pieces) scanner.write(p)
  scanner.end()
  return rows
}

describe('cells read straight off the sheet text', () => {
  it('give the rows the tag-by-tag reading gives', () => {
    const rows = rowsOf([SHEET], true)
    expect(rows).toEqual(rowsOf([SHEET], false))
    expect(rows).toEqual([
      [1, ['Receipt No.', 'Details']],
      [2, ['RBK1AAAAA1', 'Paid & kept', '2019-03-01 12:00:00', '', '-10.50', 'one']],
      [3, ['', '', 'a\rb', '', 'true', 'rich text', '#N/A', 'formula', 'x']],
      [4, ['7', '', 'after empty', '', '2.25']],
      [6, ['<cdata>', '2023-03-02 12:00:00']],
      [7, ['zero', '', '3']],
      [8, []],
      [9, ['', 'late r']],
      [10, ['1']],
    ])
  })

  it('give the same rows wherever the text is cut in two or three', () => {
    const whole = rowsOf([SHEET], false)
    for (let cut = 1; cut < SHEET.length; cut++) {
      const second = Math.min(SHEET.length - 1, cut + 7)
      expect(rowsOf([SHEET.slice(0, cut), SHEET.slice(cut)], true)).toEqual(whole)
      expect(
        rowsOf([SHEET.slice(0, cut), SHEET.slice(cut, second), SHEET.slice(second)], true),
      ).toEqual(whole)
    }
  })

  it('reads a whole row of common cells in one go, and leaves any other row to the scanner', () => {
    const rows: Array<[number, string[]]> = []
    const sheet = new SheetRows(
      { row: (cells, n) => rows.push([n, cells]) > 0, handOn: () => {} },
      BOOK,
      LIMITS,
    )
    const row = '<row r="4"><c r="A4" t="s"><v>1</v></c> <c r="C4" s="1"><v>1.25</v></c></row>'
    expect(sheet.markup(`${row}<row r="5">`, 0)).toBe(row.length)
    expect(rows).toEqual([[4, ['one', '', '1899-12-31 06:00:00']]])
    for (const other of [
      '<row r="5"/>',
      '<row r="5"><c r="A5"><f>1+1</f><v>2</v></c></row>',
      '<row r="5"><c r="A5"><v>2</v></c>',
      '<row r="5"><c r="A5"><v>2</v></c></rows>',
      '<x:row r="5"></x:row>',
    ])
      expect(sheet.markup(other, 0)).toBe(0)
    expect(rows).toHaveLength(1)
  })

  it('reads a value or an inline string at once, and leaves anything more to the scanner', () => {
    const cell = '<c r="AB12" t="inlineStr" s="3"><is><t>text</t></is></c>'
    const gt = readCellTag(cell, 2, cell.length, 0)
    expect(cellTag).toEqual({ col: 27, type: 'inlineStr', style: 3 })
    expect(plainContent(cell, gt + 1)).toBe(true)
    expect(cell.slice(plain.from, plain.to)).toBe('text')
    expect(plain.end).toBe(cell.length)
    const value = '<v xml:space="preserve"> 1 </v></c>'
    expect(plainContent(value, 0) && value.slice(plain.from, plain.to)).toBe(' 1 ')
    for (const more of [
      '<f>A1</f><v>1</v></c>',
      '<is><r><t>a</t></r></is></c>',
      '<v/></c>',
      '<v>1</v>',
    ])
      expect(plainContent(more, 0)).toBe(false)
    expect(readCellTag('<c r="A1" t=str>', 2, 16, 0)).toBe(-1)
  })
})
