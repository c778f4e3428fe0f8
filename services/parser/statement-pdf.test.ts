import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { jsPDF } from 'jspdf'
import { migrations } from '../../schema/parser/migrations.ts'
import {
  type MadeStatement,
  makeOtherPdf,
  makeStatementPdf,
} from '../../scripts/make-statement-pdf.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { cellsOf, linesOf, type TextPiece, tableColumnsOf } from './pdf-lines.ts'
import { createParserApp } from './routes.ts'
import { readStatementPdf } from './statement-pdf.ts'
import { newChunk, type StatementChunk } from './statement-row.ts'

const PASSWORD = '12345678'
let aes: MadeStatement

beforeAll(async () => {
  aes = await makeStatementPdf({ pages: 3, password: PASSWORD })
})

async function readAll(bytes: Uint8Array, password?: string) {
  const all = newChunk()
  const pages: number[] = []
  const read = await readStatementPdf(new Blob([bytes as Uint8Array<ArrayBuffer>]), {
    timeZone: 'Africa/Nairobi',
    password,
    onChunk: (c: StatementChunk) => {
      all.transactions.push(...c.transactions)
      all.rows.push(...c.rows)
      all.errors.push(...c.errors)
      all.skipped += c.skipped
    },
    onPage: (n) => pages.push(n),
  })
  return { ...all, read, pages }
}

const rejection = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    return err as { code: string; status: number; detail: string }
  }
  throw new Error('expected a rejection')
}

describe('statement PDF reader', () => {
  it('reads every completed row of a 3-page AES-256 statement, in cents, with wrapped Details joined', async () => {
    const got = await readAll(aes.bytes, PASSWORD)
    const done = aes.rows.filter((r) => r.status === 'Completed')
    expect(aes.pages).toBe(3)
    expect(got.pages).toEqual([1, 2, 3])
    expect(got.read).toMatchObject({ headerFound: true, rows: aes.rows.length })
    expect(got.errors).toEqual([])
    expect(got.skipped).toBe(aes.rows.length - done.length)
    expect(got.transactions.map((t) => t.receiptNumber)).toEqual(done.map((r) => r.receipt))
    for (const [i, t] of got.transactions.entries()) {
      const r = done[i]!
      expect(t).toMatchObject({
        description: r.details,
        amount: r.paidIn || r.withdrawn,
        direction: r.paidIn ? 'in' : 'out',
        balance: r.balance,
      })
    }
  })

  it('reads times in the tenant zone and the counterparty from Details that wrapped', async () => {
    const got = await readAll(aes.bytes, PASSWORD)
    const done = aes.rows.filter((r) => r.status === 'Completed')
    const first = done[0]!
    const t = got.transactions[0]!
    // Nairobi is UTC+3 all year.
    const utc = new Date(Date.parse(`${first.time.replace(' ', 'T')}Z`) - 3 * 3600_000)
    expect(t.occurredAt).toBe(utc.toISOString())
    const wrapped = got.transactions.find((x) => x.description.startsWith('Funds received from'))!
    expect(wrapped.counterpartyName).toMatch(/^[A-Z]+ [A-Z]+$/)
    expect(wrapped.counterpartyPhone).toMatch(/^2547\d{8}$/)
  })

  it('ignores page titles, repeated column headers, footers and the summary table', async () => {
    const got = await readAll(aes.bytes, PASSWORD)
    for (const t of got.transactions) {
      expect(t.description).not.toMatch(/Page \d|Disclaimer|M-PESA STATEMENT|Receipt No|TOTAL/)
    }
  })

  it("opens jsPDF's RC4 encryption and an unencrypted statement (a password given to it is ignored)", async () => {
    const rc4 = await makeStatementPdf({ pages: 1, password: PASSWORD, encrypt: 'jspdf' })
    const plain = await makeStatementPdf({ pages: 1 })
    const completed = (m: MadeStatement) => m.rows.filter((r) => r.status === 'Completed').length
    expect((await readAll(rc4.bytes, PASSWORD)).transactions).toHaveLength(completed(rc4))
    expect((await readAll(plain.bytes)).transactions).toHaveLength(completed(plain))
    expect((await readAll(plain.bytes, 'anything')).transactions).toHaveLength(completed(plain))
  })

  it('asks for the password when none is given and refuses a wrong one', async () => {
    expect(await rejection(readAll(aes.bytes))).toMatchObject({
      code: 'STATEMENT_PASSWORD_REQUIRED',
      status: 422,
    })
    expect(await rejection(readAll(aes.bytes, 'wrong-id'))).toMatchObject({
      code: 'STATEMENT_PASSWORD_INCORRECT',
      status: 422,
    })
  })

  it('finds no statement in a PDF of another kind and says what it found', async () => {
    const got = await readAll(makeOtherPdf())
    expect(got.read.headerFound).toBe(false)
    expect(got.read.found).toBe('Item, Qty, Price')
    const broken = new TextEncoder().encode('%PDF-1.7\nthis is not really a pdf')
    expect(await rejection(readAll(broken))).toMatchObject({ code: 'VALIDATION_FAILED' })
  })

  it('continues a row whose Details ran over the page break, below the repeated header', async () => {
    const doc = new jsPDF({ unit: 'pt', format: 'a4' })
    doc.setFontSize(8)
    const head = (y: number) => {
      for (const [label, x] of [
        ['Receipt No.', 30],
        ['Completion Time', 92],
        ['Details', 180],
        ['Transaction Status', 345],
      ] as const)
        doc.text(label, x, y)
      doc.text('Paid In', 455, y, { align: 'right' })
      doc.text('Withdrawn', 510, y, { align: 'right' })
      doc.text('Balance', 565, y, { align: 'right' })
    }
    head(60)
    doc.text('SXB0000001', 30, 80)
    doc.text('2024-05-01 10:00:00', 92, 80)
    doc.text('Merchant Payment to 123456 -', 180, 80)
    doc.text('COMPLETED', 345, 80)
    doc.text('-1,234,567.50', 510, 80, { align: 'right' })
    doc.text('10,000.00', 565, 80, { align: 'right' })
    doc.text('Page 1 of 2', 297, 820, { align: 'center' })
    doc.addPage()
    head(60)
    doc.text('SHELL KAREN', 180, 72)
    doc.text('Page 2 of 2', 297, 820, { align: 'center' })
    const got = await readAll(new Uint8Array(doc.output('arraybuffer')))
    expect(got.transactions).toMatchObject([
      {
        receiptNumber: 'SXB0000001',
        description: 'Merchant Payment to 123456 - SHELL KAREN',
        counterpartyName: 'SHELL KAREN',
        amount: 123456750,
        direction: 'out',
        balance: 1000000,
      },
    ])
  })
})

describe('statement PDF geometry', () => {
  const piece = (text: string, x: number, y: number, width = text.length * 4): TextPiece => ({
    text,
    x,
    y,
    width,
    size: 8,
  })
  const header = linesOf([
    piece('Receipt No.', 30, 700),
    piece('Completion Time', 92, 700),
    piece('Details', 180, 700),
    piece('Transaction Status', 345, 700.4),
    piece('Paid In', 427, 700),
    piece('Withdrawn', 470, 700),
    piece('Balance', 537, 700),
  ])

  it('groups pieces on one baseline into a line and finds the header columns', () => {
    expect(header).toHaveLength(1)
    expect(tableColumnsOf(header[0]!)?.bands.map((b) => b.column)).toEqual([
      'receipt',
      'time',
      'details',
      'status',
      'paidIn',
      'withdrawn',
      'balance',
    ])
  })

  it('puts a right-aligned amount wider than its header under that header', () => {
    const table = tableColumnsOf(header[0]!)!
    const [line] = linesOf([
      piece('SAB1CD2EF1', 30, 680),
      piece('Completed', 345, 680),
      piece('1,234,567.00', 407, 680, 48),
      piece('9,999,999.00', 517, 680, 48),
    ])
    expect(cellsOf(line!, table)).toMatchObject({
      receipt: 'SAB1CD2EF1',
      status: 'Completed',
      paidIn: '1,234,567.00',
      withdrawn: '',
      balance: '9,999,999.00',
    })
  })

  it('refuses a sentence running across the table as a table line', () => {
    const table = tableColumnsOf(header[0]!)!
    const [line] = linesOf([
      piece('Disclaimer: this record is for your information only', 30, 60, 420),
    ])
    expect(cellsOf(line!, table)).toBeNull()
  })
})

describe('statement PDF upload', () => {
  let kit: TestKit
  let app: ReturnType<typeof createParserApp>
  beforeAll(async () => {
    kit = await createTestKit('parser', { migrations })
    app = createParserApp(kit.ctx)
  })
  afterAll(() => kit.cleanup())

  const upload = async (bytes: Uint8Array, fields: Record<string, string> = {}) => {
    const form = new FormData()
    form.append('file', new File([bytes as Uint8Array<ArrayBuffer>], 'statement.pdf'))
    for (const [k, v] of Object.entries(fields)) form.append(k, v)
    const res = await app.handle(
      new Request('http://localhost/api/v1/statements', {
        method: 'POST',
        headers: await kit.authFor({ tenantId: 'pdf', role: 'Admin' }),
        body: form,
      }),
    )
    return { status: res.status, body: (await res.json()) as any }
  }

  it('imports the PDF with its password, then accepts nothing twice', async () => {
    const done = aes.rows.filter((r) => r.status === 'Completed').length
    const first = await upload(aes.bytes, { password: PASSWORD })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({
      accepted: done,
      duplicates: 0,
      rejected: 0,
      skipped: aes.rows.length - done,
      errors: [],
    })
    const again = await upload(aes.bytes, { password: PASSWORD })
    expect(again.body).toMatchObject({ accepted: 0, duplicates: done })
  })

  it('answers 422 with the password codes and for a PDF that is not a statement', async () => {
    const none = await upload(aes.bytes)
    expect(none).toMatchObject({ status: 422, body: { code: 'STATEMENT_PASSWORD_REQUIRED' } })
    const wrong = await upload(aes.bytes, { password: 'nope' })
    expect(wrong).toMatchObject({ status: 422, body: { code: 'STATEMENT_PASSWORD_INCORRECT' } })
    const other = await upload(makeOtherPdf())
    expect(other.status).toBe(422)
    expect(other.body.detail).toContain('the PDF is not an M-Pesa statement')
  })
})
