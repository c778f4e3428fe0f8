import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as XLSX from '@e965/xlsx'
import Papa from 'papaparse'
import type { ParsedTransaction } from './parsed.ts'
import { readStatement } from './read-statement.ts'
import { MAX_UNPACKED, zipDirectory } from './spreadsheet.ts'

/**
 * The org-portal statement as the business portal hands it out, XLSX, XLS or an HTML ".xls",
 * made here from the anonymised CSV fixture (test/fixtures/statements/org-portal) so each
 * carries the same rows, preamble and arithmetic.
 */
const csv = readFileSync(
  join(import.meta.dir, '../../test/fixtures/statements/org-portal/utility-account-2024-03.csv'),
  'utf8',
)
const grid = Papa.parse<string[]>(csv.trim()).data

function workbook(bookType: XLSX.BookType, opts: { dates?: boolean } = {}): Blob {
  const rows: unknown[][] = grid.map((r) => [...r])
  const header = rows.findIndex((r) => r[0] === 'Receipt No.')
  for (let i = header + 1; i < rows.length; i++) {
    const row = rows[i]!
    for (const c of [5, 6, 7]) if (row[c] !== '') row[c] = Number(row[c])
    if (opts.dates) {
      // Completion Time as a spreadsheet date (a serial number with a date format).
      const [d, m, y, H, M, S] = String(row[1]).split(/[- :]/).map(Number) as number[]
      row[1] = new Date(Date.UTC(y!, m! - 1, d!, H, M, S))
    }
  }
  const sheet = XLSX.utils.aoa_to_sheet(rows, { cellDates: opts.dates, UTC: true })
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, sheet, 'Statement')
  return new Blob([XLSX.write(book, { type: 'array', bookType })])
}

async function read(file: Blob) {
  const rows: ParsedTransaction[] = []
  const r = await readStatement(file, {
    timeZone: 'Africa/Nairobi',
    onChunk: (c) => void rows.push(...c.transactions),
  })
  return { ...r, kept: rows }
}

describe('org-portal statement spreadsheets', () => {
  for (const bookType of ['xlsx', 'biff8', 'html'] as const) {
    it(`reads all 34 rows of the ${bookType} export and proves its totals`, async () => {
      const r = await read(workbook(bookType))
      expect(r.format).toBe('spreadsheet')
      expect(r.layout?.id).toBe('org-portal')
      expect(r.counts).toEqual({ read: 34, kept: 34, skipped: 0, rejected: 0 })
      expect(r.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
      expect(r.kept.filter((t) => t.kind === 'charge')).toHaveLength(16)
    })
  }

  it('reads Completion Times stored as spreadsheet dates as the same wall-clock times', async () => {
    const asText = await read(workbook('xlsx'))
    const asDates = await read(workbook('xlsx', { dates: true }))
    expect(asDates.counts).toEqual(asText.counts)
    expect(asDates.kept.map((t) => t.occurredAt)).toEqual(asText.kept.map((t) => t.occurredAt))
  })

  it('refuses a zip that would unpack past the limit, before unpacking it', async () => {
    const bytes = new Uint8Array(await workbook('xlsx').arrayBuffer())
    expect((await zipDirectory(new Blob([bytes])))!.unpacked).toBeLessThan(MAX_UNPACKED)
    // Declare one entry's unpacked size as 4 GiB − 1 in the central directory.
    const view = new DataView(bytes.buffer)
    let at = -1
    for (let i = 0; i < bytes.length - 4; i++) if (view.getUint32(i, true) === 0x02014b50) at = i
    view.setUint32(at + 24, 0xfffffffe, true)
    await expect(read(new Blob([bytes]))).rejects.toMatchObject({
      code: 'STATEMENT_TOO_LARGE',
      errors: [
        { field: 'file', message: `it unpacks to more than ${MAX_UNPACKED / 1024 / 1024} MiB` },
      ],
    })
  })

  it('says a workbook without a statement table holds none', async () => {
    const book = XLSX.utils.book_new()
    XLSX.utils.book_append_sheet(
      book,
      XLSX.utils.aoa_to_sheet([
        ['Name', 'Age', 'Town'],
        ['A', 1, 'B'],
      ]),
      'S',
    )
    const file = new Blob([XLSX.write(book, { type: 'array', bookType: 'xlsx' })])
    await expect(read(file)).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('the spreadsheet holds no M-Pesa statement table'),
    })
  })
})
