import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as XLSX from '@e965/xlsx'
import Papa from 'papaparse'
import { gridXlsx, workbookParts, zip } from '../../test/support/xlsx.ts'
import type { ParsedTransaction } from './parsed.ts'
import { readStatement } from './read-statement.ts'

/**
 * The XLSX stream reader (spreadsheet-xlsx.ts) against what the org-portal fixture's CSV says:
 * every way a spreadsheet program stores the same rows (shared or inline strings, numbers, dates
 * as serial numbers, namespace prefixes, rich text) gives the same transactions and the same
 * proof, and a hostile zip is refused in words.
 */
const csvText = readFileSync(
  join(import.meta.dir, '../../test/fixtures/statements/org-portal/utility-account-2024-03.csv'),
  'utf8',
)
const grid = Papa.parse<string[]>(csvText.trim()).data
const HEADER = grid.findIndex((r) => r[0] === 'Receipt No.')

async function read(file: Blob) {
  const rows: ParsedTransaction[] = []
  const r = await readStatement(file, {
    timeZone: 'Africa/Nairobi',
    onChunk: (c) => void rows.push(...c.transactions),
  })
  return { ...r, kept: rows }
}

/** The fixture's grid with amounts as numbers and, optionally, times as dates. */
function typedGrid(dates: boolean): Array<Array<string | number | Date | null>> {
  return grid.map((row, i) => {
    if (i <= HEADER) return [...row]
    return row.map((cell, c) => {
      if ([5, 6, 7].includes(c) && cell !== '') return Number(cell)
      if (dates && (c === 1 || c === 2)) {
        const [d, m, y, H, M, S] = cell.split(/[- :]/).map(Number) as number[]
        return new Date(Date.UTC(y!, m! - 1, d!, H, M, S))
      }
      return cell
    })
  })
}

const sheetJs = (opts: XLSX.WritingOptions) => {
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(typedGrid(false)), 'Statement')
  return new Blob([XLSX.write(book, { type: 'array', ...opts })])
}

describe('XLSX statements read as a stream', () => {
  const variants: Array<[string, () => Blob]> = [
    [
      'shared strings, numbers and date cells (as Excel saves)',
      () => new Blob([gridXlsx(typedGrid(true))]),
    ],
    ['shared strings and numbers, times as text', () => new Blob([gridXlsx(typedGrid(false))])],
    ['SheetJS with a shared string table', () => sheetJs({ bookType: 'xlsx', bookSST: true })],
    [
      'SheetJS inline strings, stored without compression',
      () => sheetJs({ bookType: 'xlsx', compression: false }),
    ],
  ]
  for (const [name, make] of variants) {
    it(`${name}: the same transactions as the CSV, proven`, async () => {
      const fromCsv = await read(new Blob([csvText]))
      const r = await read(make())
      expect(r.format).toBe('spreadsheet')
      expect(r.layout?.id).toBe('org-portal')
      expect(r.counts).toEqual({ read: 34, kept: 34, skipped: 0, rejected: 0 })
      expect(r.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
      expect(r.kept).toEqual(fromCsv.kept)
    })
  }

  // SheetJS agrees on all of it but two, which it got wrong: a 1904-system date read as a
  // 1900-system one (four years early) and an ISO date cell (`t="d"`) read as a bare number.
  it('reads prefixed names, rich text, escapes, inline strings, 1904 and ISO dates', async () => {
    const NS = 'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    const header =
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'.split(',')
    // Shared strings: plain, rich text with a phonetic run left out, an entity and an _x escape.
    const sst = [
      ...header.map((h) => `<x:si><x:t>${h}</x:t></x:si>`),
      '<x:si><x:r><x:t>Funds received from - 2547****106 </x:t></x:r><x:r><x:rPr/><x:t>A &amp; B</x:t></x:r><x:rPh><x:t>ignored</x:t></x:rPh></x:si>',
      '<x:si><x:t>Pay Bill_x0020_Charge</x:t></x:si>',
    ]
    const row = (r: number, cells: string) => `<x:row r="${r}">${cells}</x:row>`
    // 1904 system: serial 43525.5 is 2023-03-02 12:00:00.
    const rows = [
      row(1, '<x:c r="A1" t="inlineStr"><x:is><x:t>M-PESA STATEMENT</x:t></x:is></x:c>'),
      row(3, header.map((_, i) => `<x:c t="s"><x:v>${i}</x:v></x:c>`).join('')),
      row(
        4,
        '<x:c t="inlineStr"><x:is><x:t><![CDATA[RBK1AAAAA1]]></x:t></x:is></x:c><x:c s="1"><x:v>43525.5</x:v></x:c><x:c t="s"><x:v>7</x:v></x:c><x:c t="str"><x:f>X</x:f><x:v>Completed</x:v></x:c><x:c><x:v>1000.5</x:v></x:c><x:c r="G4"><x:v>1100.5</x:v></x:c>',
      ),
      row(
        5,
        '<x:c r="A5" t="str"><x:v>RBK1AAAAA1</x:v></x:c><x:c r="B5" t="d"><x:v>2023-03-02T12:00:00</x:v></x:c><x:c r="C5" t="s"><x:v>8</x:v></x:c><x:c r="D5" t="inlineStr"><x:is><x:t>Completed</x:t></x:is></x:c><x:c r="F5"><x:v>-10</x:v></x:c><x:c r="G5"><x:v>1090.5</x:v></x:c>',
      ),
    ]
    const parts = workbookParts({
      sheets: [
        {
          name: 'Notes',
          data: '<row r="1"><c r="A1" t="inlineStr"><is><t>hello</t></is></c></row>',
        },
        { name: 'Statement', data: rows.join('') },
      ],
      sharedStrings: sst.join(''),
      numFmts: [{ id: 170, code: '[$-409]d/m/yyyy\\ h:mm;@' }],
      styles: [0, 170],
      date1904: true,
    }).map((p) =>
      p.name === 'xl/worksheets/sheet2.xml' || p.name === 'xl/sharedStrings.xml'
        ? {
            ...p,
            data: String(p.data)
              .replace(/<(\/?)(worksheet|sheetData|sst)/g, `<$1x:$2`)
              .replace('<x:worksheet ', `<x:worksheet ${NS} `)
              .replace('<x:sst ', `<x:sst ${NS} `),
          }
        : p,
    )
    const r = await read(new Blob([zip(parts)]))
    expect(r.counts).toEqual({ read: 2, kept: 2, skipped: 0, rejected: 0 })
    expect(r.kept.map((t) => [t.occurredAt, t.description, t.amount, t.direction])).toEqual([
      ['2023-03-02T09:00:00.000Z', 'Funds received from - 2547****106 A & B', 100050, 'in'],
      ['2023-03-02T09:00:00.000Z', 'Pay Bill Charge', 1000, 'out'],
    ])
  })
})

const HEADER_LABELS =
  'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'.split(',')

describe('other zip workbooks', () => {
  it('leaves an XLSB (binary workbook) to SheetJS, which reads its statement', async () => {
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(typedGrid(false)), 'Statement')
    const r = await read(new Blob([XLSX.write(book, { type: 'array', bookType: 'xlsb' })]))
    expect(r.counts).toEqual({ read: 34, kept: 34, skipped: 0, rejected: 0 })
    expect(r.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
  })

  it('leaves an OpenDocument spreadsheet (a LibreOffice .ods) to SheetJS, which reads its statement', async () => {
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(typedGrid(false)), 'Statement')
    const r = await read(new Blob([XLSX.write(book, { type: 'array', bookType: 'ods' })]))
    expect(r.counts).toEqual({ read: 34, kept: 34, skipped: 0, rejected: 0 })
    expect(r.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
  })
})

describe('hostile XLSX files are refused in words, never a 500', () => {
  const sheet = (data: string) => workbookParts({ sheets: [{ name: 'S', data }] })
  const refused = async (file: Uint8Array<ArrayBuffer>, code: string, message: RegExp) => {
    const err = await read(new Blob([file])).then(
      () => null,
      (e: unknown) => e as { code: string; status: number; message: string },
    )
    expect(err).toMatchObject({ code, status: 422 })
    expect(err!.message).toMatch(message)
  }

  it('stops an inflate bomb whose directory lies about its size, before it unpacks', async () => {
    const bomb = `<row r="1"><c t="inlineStr"><is><t>${'0'.repeat(50_000_000)}</t></is></c></row>`
    const parts = sheet(bomb).map((p) =>
      p.name.endsWith('sheet1.xml') ? { ...p, declaredSize: 4096 } : p,
    )
    const started = performance.now()
    await refused(
      zip(parts),
      'STATEMENT_UNREADABLE',
      /unpacks past the size its zip directory declares/,
    )
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it('refuses a part that is not deflate data', async () => {
    const bytes = zip(sheet('<row r="1"><c><v>1</v></c></row>'))
    // Spoil the sheet's compressed bytes (its name is followed by its data).
    const at = Buffer.from(bytes).indexOf('xl/worksheets/sheet1.xml') + 24
    bytes.fill(0xff, at, at + 8)
    await refused(bytes, 'STATEMENT_UNREADABLE', /cannot be read/)
  })

  it('refuses a sheet past the row limit, without reading the rest', async () => {
    await refused(
      zip(sheet('<row r="500001"><c><v>1</v></c></row>')),
      'STATEMENT_TOO_LARGE',
      /more than 500000 rows/,
    )
  })

  it('refuses a document type declaration (no entity is ever expanded)', async () => {
    const parts = sheet('').map((p) =>
      p.name.endsWith('sheet1.xml')
        ? { ...p, data: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><worksheet/>' }
        : p,
    )
    await refused(zip(parts), 'STATEMENT_UNREADABLE', /document type/)
  })

  it('refuses a tag that never ends, without holding it whole', async () => {
    await refused(
      zip(sheet(`<row r="1"><c r="${'A'.repeat(5_000_000)}`)),
      'STATEMENT_UNREADABLE',
      /tag runs on/,
    )
  })

  it('reads cells without attributes and cells far to the right in time linear in the sheet', async () => {
    // Under a statement header, 320,000 bare cells (no `=` in a whole piece of the sheet), then
    // rows with one cell at XFD: a search that ran past a tag's end, or a row as wide as its last
    // cell, would take minutes.
    const header = HEADER_LABELS.map((h) => `<c t="inlineStr"><is><t>${h}</t></is></c>`).join('')
    const rows = [
      `<row>${header}</row>`,
      ...Array.from({ length: 20_000 }, () => `<row>${'<c><v>1</v></c>'.repeat(16)}</row>`),
      ...Array.from(
        { length: 20_000 },
        (_, r) => `<row><c r="XFD${r + 20_002}"><v>2</v></c></row>`,
      ),
    ]
    const started = performance.now()
    const r = await read(new Blob([zip(sheet(rows.join('')))]))
    expect(r.counts).toMatchObject({ read: 20_000, kept: 0 })
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('hands rows on as the sheet unpacks, before its end is reached', async () => {
    const header =
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'
    const cells = (values: string[]) =>
      values.map((v) => `<c t="inlineStr"><is><t>${v}</t></is></c>`).join('')
    const rows = [`<row r="1">${cells(header.split(','))}</row>`]
    for (let r = 2; r < 40_000; r++)
      rows.push(
        `<row r="${r}">${cells([`RBK${String(r).padStart(7, '0')}`, '2024-03-01 10:00:00', 'Funds received from - 2547****106 A B', 'Completed', '10.00', '', `${r * 10}.00`])}</row>`,
      )
    const bytes = zip(sheet(rows.join('')))
    // Spoil the last bytes of the sheet's deflate stream: a reader that unpacked the whole sheet
    // before reading it would fail before handing on a single row.
    // (The sheet is the last part: its data ends where the central directory starts.)
    const at = Buffer.from(bytes).indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
    bytes.fill(0xff, at - 64, at)
    let handed = 0
    const err = await readStatement(new Blob([bytes]), {
      timeZone: 'Africa/Nairobi',
      onChunk: (c) => {
        handed += c.transactions.length
      },
    }).then(
      () => null,
      (e: unknown) => e as { code: string },
    )
    expect(err).toMatchObject({ code: 'STATEMENT_UNREADABLE' })
    expect(handed).toBeGreaterThanOrEqual(5000)
  })

  it('refuses an encrypted part', async () => {
    const bytes = zip(sheet('<row r="1"><c><v>1</v></c></row>'))
    const view = new DataView(bytes.buffer)
    for (let i = 0; i < bytes.length - 4; i++)
      if (view.getUint32(i, true) === 0x02014b50) view.setUint16(i + 8, 1, true)
    await refused(bytes, 'STATEMENT_UNREADABLE', /encrypted/)
  })
})
