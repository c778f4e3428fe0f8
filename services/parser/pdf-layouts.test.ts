import { describe, expect, it } from 'bun:test'
import {
  type MadeStatement,
  makeStatementPdf,
  type StatementOptions,
} from '../../scripts/make-statement-pdf.ts'
import type { ParsedTransaction, RowError } from './parsed.ts'
import { readStatementPdf } from './statement-pdf.ts'

/**
 * Every layout the generator makes (learnt from real statements, docs/statement-layouts.md) read
 * back row for row, with the file's own totals and running balance reproduced.
 */
const NOW = Date.parse('2024-04-01T00:00:00Z')

async function read(opts: StatementOptions) {
  const made = await makeStatementPdf(opts)
  const transactions: ParsedTransaction[] = []
  const errors: RowError[] = []
  let skipped = 0
  const got = await readStatementPdf(new Blob([made.bytes as Uint8Array<ArrayBuffer>]), {
    timeZone: 'Africa/Nairobi',
    now: NOW,
    onChunk: (c) => {
      transactions.push(...c.transactions)
      errors.push(...c.errors)
      skipped += c.skipped
    },
  })
  return { made, got, transactions, errors, skipped }
}

const completed = (m: MadeStatement) => m.rows.filter((r) => r.status === 'Completed')

function expectEveryRow(r: Awaited<ReturnType<typeof read>>) {
  const { made, got, transactions, errors } = r
  expect(errors).toEqual([])
  expect(got.counts).toEqual({
    read: made.rows.length,
    kept: completed(made).length,
    skipped: made.rows.length - completed(made).length,
    rejected: 0,
  })
  expect(transactions.map((t) => [t.receiptNumber, t.description, t.amount, t.direction])).toEqual(
    completed(made).map((m) => [
      m.receipt,
      m.details,
      m.paidIn || m.withdrawn,
      m.paidIn ? 'in' : 'out',
    ]),
  )
}

describe('statement PDF layouts', () => {
  for (const [layout, id, chains] of [
    ['personal', 'personal', true],
    ['app-2025', 'app-2025', true],
    ['no-balance', 'personal', null],
    ['other-tool', 'table', true],
  ] as const) {
    it(`reads every row of a ${layout} statement with Fuliza groups and charges, and its totals and balance prove it`, async () => {
      const r = await read({ layout, pages: 4, legs: true, seed: 11 })
      expectEveryRow(r)
      expect(r.got.layout?.id).toBe(id)
      expect(r.got.proof).toMatchObject({ totalsMatch: true, balanceChains: chains, breakCount: 0 })
      const details = r.transactions.map((t) => t.description)
      expect(details).toContainEqual('OverDraft of Credit Party')
      expect(details).toContainEqual('OD Loan Repayment to 232323 - M-PESA Overdraw')
      expect(
        details.some((d) => /^(Pay Bill Online|Customer Transfer) Fuliza M-?Pesa/.test(d)),
      ).toBe(true)
    })
  }

  it('keeps the payment, its charge and its Fuliza draw that share one receipt', async () => {
    const r = await read({ pages: 3, legs: true, seed: 5 })
    const byReceipt = Map.groupBy(r.transactions, (t) => t.receiptNumber)
    const group = [...byReceipt.values()].find(
      (g) => g.length === 3 && g.some((t) => t.description === 'OverDraft of Credit Party'),
    )
    expect(group?.map((t) => t.direction).sort()).toEqual(['in', 'out', 'out'])
  })

  it('keeps Details that run over a page break whole, and receipts whose rows straddle pages', async () => {
    const r = await read({ pages: 6, legs: true, breakRows: true, seed: 3 })
    expect(r.made.acrossPages.details.length).toBeGreaterThan(0)
    expectEveryRow(r)
    expect(r.got.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
  })

  it('reads rows whose receipt, time and amounts are centred on multi-line Details', async () => {
    for (const layout of ['personal', 'app-2025'] as const) {
      const r = await read({ layout, pages: 3, legs: true, valign: 'middle', seed: 9 })
      expect(r.transactions.some((t) => t.description.length > 40)).toBe(true)
      expectEveryRow(r)
    }
  })

  it('reads all rows under a two-line "Transaction Status" header cell', async () => {
    const r = await read({ layout: 'other-tool', pages: 5, seed: 2 })
    expectEveryRow(r)
    expect(r.made.rows.length).toBeGreaterThan(100)
  })

  it('flags a statement with a deleted row where the balance breaks, naming its times and amount', async () => {
    // A row alone in its second, between rows alone in theirs: the break has one place to be.
    const whole = await makeStatementPdf({ pages: 3, legs: true, seed: 4 })
    const alone = (i: number) =>
      whole.rows.filter((r) => r.time === whole.rows[i]?.time).length === 1
    const i = whole.rows.findIndex(
      (r, k) => k > 10 && r.status === 'Completed' && alone(k - 1) && alone(k) && alone(k + 1),
    )
    const r = await read({ pages: 3, legs: true, seed: 4, omit: [i] })
    const gone = r.made.omitted[0]!
    expect(gone).toEqual(whole.rows[i]!)
    expect(r.got.proof).toMatchObject({ balanceChains: false, totalsMatch: false, breakCount: 1 })
    expect(r.got.proof!.breaks[0]).toMatchObject({
      between: [whole.rows[i + 1]!.time, whole.rows[i - 1]!.time],
      missing: gone.paidIn - gone.withdrawn,
    })
  })

  it('makes PDFs a peer reader (pdftotext) reads as the same rows', async () => {
    const made = await makeStatementPdf({ layout: 'app-2025', pages: 2, legs: true })
    const proc = Bun.spawn(['pdftotext', '-layout', '-', '-'], {
      stdin: made.bytes,
      stdout: 'pipe',
    })
    const text = await new Response(proc.stdout).text()
    expect(text).toContain('MPESA FULL STATEMENT')
    expect(text).toMatch(/Receipt\s+Completion[^\n]*Transaction/)
    for (const r of made.rows) expect(text).toContain(r.receipt)
    expect(text).toContain('COMPLETED')
  })
})
