import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { readStatement } from './read-statement.ts'

/**
 * Each layout's anonymised fixture (test/fixtures/statements, learnt from real public files: see
 * the README beside each) read end to end: every row in one counter, and the kept rows
 * reproduce the file's own totals and running balance.
 */
const fixtures = join(import.meta.dir, '../../test/fixtures/statements')
const timeZone = 'Africa/Nairobi'

async function read(text: string | Blob) {
  const rows: ParsedTransaction[] = []
  const errors: RowError[] = []
  let skipped = 0
  const file = typeof text === 'string' ? new Blob([text]) : text
  const r = await readStatement(file, {
    timeZone,
    onChunk: (c) => {
      rows.push(...c.transactions)
      errors.push(...c.errors)
      skipped += c.skipped
    },
  })
  return { ...r, kept: rows, errors, skippedRows: skipped }
}

const fixture = (path: string) => readFileSync(join(fixtures, path), 'utf8')
const sum = (rows: ParsedTransaction[], dir: 'in' | 'out') =>
  rows.filter((t) => t.direction === dir).reduce((s, t) => s + t.amount!, 0)

describe('org-portal (M-PESA business) statement, CSV', () => {
  it("reads all 34 rows and reproduces the preamble's opening, closing and totals", async () => {
    const r = await read(fixture('org-portal/utility-account-2024-03.csv'))
    expect(r.layout?.id).toBe('org-portal')
    expect(r.counts).toEqual({ read: 34, kept: 34, skipped: 0, rejected: 0 })
    expect(r.proof).toMatchObject({
      file: { opening: 1_245_000, closing: 0, paidIn: 7_241_450, paidOut: 8_486_450 },
      totalsMatch: true,
      balanceChains: true,
      breakCount: 0,
    })
    expect(sum(r.kept, 'in')).toBe(7_241_450)
    expect(sum(r.kept, 'out')).toBe(8_486_450)
  })

  it('keeps each payment and its charge under their shared receipt, as two kinds', async () => {
    const r = await read(fixture('org-portal/utility-account-2024-03.csv'))
    const receipt = r.kept.filter((t) => t.receiptNumber === 'SC97L4UR32')
    expect(receipt.map((t) => [t.kind, t.leg, t.amount])).toEqual([
      ['charge', 'charge', 3300],
      ['customer_payment', '', 600_000],
    ])
    const kinds = Object.groupBy(r.kept, (t) => t.kind!)
    expect(kinds.charge).toHaveLength(16)
    expect(kinds.customer_payment).toHaveLength(16)
    expect(kinds.settlement).toHaveLength(2)
    // The masked payer's name comes from the row; the masked phone is no phone.
    expect(receipt[1]).toMatchObject({
      counterpartyName: 'FAITH **** CHEBET',
      counterpartyPhone: null,
    })
  })

  it('flags a statement with a deleted row at the right place, with the missing amount', async () => {
    const lines = fixture('org-portal/utility-account-2024-03.csv').split(/\r?\n/)
    const gone = lines.findIndex((l) => l.includes('FAITH **** CHEBET'))
    const r = await read([...lines.slice(0, gone), ...lines.slice(gone + 1)].join('\n'))
    expect(r.counts?.read).toBe(33)
    expect(r.proof?.totalsMatch).toBe(false)
    expect(r.proof?.balanceChains).toBe(false)
    expect(r.proof?.breaks[0]).toMatchObject({
      between: ['09-03-2024 01:17:03', '09-03-2024 11:06:03'],
      missing: 600_000,
    })
  })
})

describe('converter CSVs of a personal statement', () => {
  const expected = JSON.parse(fixture('converter/expected.json'))

  it('reads every row of the tabula CSV past its repeated headers and verification blocks', async () => {
    const r = await read(fixture('converter/tabula-repeated-headers.csv'))
    expect(r.counts).toEqual({ read: 52, kept: 51, skipped: 1, rejected: 0 })
    expect(r.errors).toEqual([])
    // The running balance chains (rows of one second taken in any order).
    expect(r.proof).toMatchObject({ balanceChains: true, closing: 513_079 })
    expect(sum(r.kept, 'in')).toBe(4_397_078)
    // The cancelled row is counted as skipped and its amount only in the all-rows total.
    expect(r.proof?.rows.paidOutAll).toBe(4_002_449)
    expect(expected['tabula-repeated-headers.csv'].data_rows).toBe(52)
  })

  it('reads a statement without a Balance column, with nothing to chain', async () => {
    const r = await read(fixture('converter/no-balance.csv'))
    expect(r.counts).toMatchObject({ read: 52, rejected: 0 })
    expect(r.proof).toMatchObject({ balanceChains: null, totalsMatch: null })
    expect(sum(r.kept, 'in')).toBe(4_397_078)
    expect(sum(r.kept, 'out')).toBe(3_902_449)
  })

  it('keeps the rows of a Fuliza-funded payment apart: payment, overdraft drawn, charge', async () => {
    const r = await read(fixture('converter/tabula-repeated-headers.csv'))
    const group = r.kept.filter((t) => t.receiptNumber === 'QCF0QZOAIR')
    expect(group.map((t) => t.kind).sort()).toEqual(['charge', 'loan_drawn', 'supplier_payment'])
  })
})

describe('refusals in words', () => {
  it('refuses a photo of a statement, naming what it is', async () => {
    const jpeg = new Blob([new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46])])
    await expect(read(jpeg)).rejects.toMatchObject({
      code: 'STATEMENT_UNREADABLE',
      errors: [{ field: 'file', message: 'a JPEG photo, not a statement file' }],
    })
  })

  it('refuses rows dated before 2007 or after tomorrow', async () => {
    const r = await read(
      [
        'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
        'QAA1BB2CC3,1970-01-01 10:00:00,Funds received from - 0712000001 A,Completed,100.00,,100.00',
        'QAA1BB2CC4,2099-01-01 10:00:00,Funds received from - 0712000001 A,Completed,100.00,,200.00',
      ].join('\n'),
    )
    expect(r.counts).toMatchObject({ read: 2, rejected: 2 })
    expect(r.errors.map((e) => e.field)).toEqual(['Completion Time', 'Completion Time'])
  })
})

describe('every row in one counter', () => {
  it('rejects a row with a status but neither a receipt nor a time, rather than pass it over', async () => {
    const r = await read(
      [
        'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
        'QAA1BB2CC3,2024-01-05 10:00:00,Funds received from - 0712000001 A,Completed,100.00,,100.00',
        'XYZ,not a date,Funds received,Completed,1.00,,1.00',
        'TOTAL,,,,100.00,0.00,',
      ].join('\n'),
    )
    expect(r.counts).toEqual({ read: 2, kept: 1, skipped: 0, rejected: 1 })
    expect(r.errors[0]).toMatchObject({ row: 3, field: 'Receipt No.' })
  })
})
