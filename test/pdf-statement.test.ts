import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import {
  type MadeStatement,
  makeOtherPdf,
  makeStatementPdf,
} from '../scripts/make-statement-pdf.ts'
import { cli } from './support/cli.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantOwner, createTenants } from './support/tenants.ts'

/**
 * The emailed M-PESA statement PDF through a running platform: generated at test time (jsPDF,
 * then `qpdf --encrypt … 256`, about 0.1 s), never a real person's statement.
 */
const _root = join(import.meta.dir, '..')
const PASSWORD = '29876543'
const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'

const completed = (m: MadeStatement) => m.rows.filter((r) => r.status === 'Completed')
const toMajor = (cents: number) => cents / 100

describe('the emailed M-PESA statement PDF on a running platform', () => {
  let p: TestPlatform
  let statement: MadeStatement

  /** A tenant of the test's own: its first Admin's access token. */
  const ownerOf = async (id: string) => (await createTenantOwner(p, { id })).token
  const upload = async (
    token: string,
    file: Blob,
    name: string,
    fields: Record<string, string> = {},
  ) => {
    const form = new FormData()
    form.append('file', new File([file], name))
    for (const [k, v] of Object.entries(fields)) form.append(k, v)
    const res = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  beforeAll(async () => {
    const made = makeStatementPdf({ pages: 3, password: PASSWORD, receiptPrefix: 'SP' })
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,parser,categorizer,analytics,broker',
    })
    statement = await made
  }, 60_000)
  afterAll(async () => {
    await p?.dispose()
  })

  it('imports a 3-page encrypted statement with the right counts, amounts and balances', async () => {
    const owner = await ownerOf('pdfshop')
    const done = completed(statement)
    const res = await upload(
      owner,
      new Blob([statement.bytes as Uint8Array<ArrayBuffer>]),
      'mpesa.pdf',
      {
        password: PASSWORD,
      },
    )
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      accepted: done.length,
      duplicates: 0,
      rejected: 0,
      skipped: statement.rows.length - done.length,
      errors: [],
    })
    expect(res.body.import_id).toMatch(/^imp_/)

    const inC = done.reduce((s, r) => s + r.paidIn, 0)
    const outC = done.reduce((s, r) => s + r.withdrawn, 0)
    const summary = await eventually(
      async () => {
        const s = await api(p.gateway, owner).get('/api/v1/analytics/summary')
        return s.body?.total_transactions === done.length ? s.body : undefined
      },
      20_000,
      'the analytics summary to count every row',
    )
    expect(summary).toMatchObject({
      total_in: toMajor(inC),
      total_out: toMajor(outC),
      net: toMajor(inC - outC),
    })
    const page = await api(p.gateway, owner).get('/api/v1/analytics/transactions?limit=500')
    const byReceipt = new Map<string, any>(page.body.data.map((t: any) => [t.receipt_number, t]))
    expect(byReceipt.size).toBe(done.length)
    for (const r of done) {
      expect(byReceipt.get(r.receipt)).toMatchObject({
        amount: toMajor(r.paidIn || r.withdrawn),
        direction: r.paidIn ? 'in' : 'out',
        balance: toMajor(r.balance),
        description: r.details,
        source: 'statement',
      })
    }
  }, 60_000)

  it('imports an unencrypted 2025 app statement with Fuliza groups and charges, every row kept', async () => {
    const app = await makeStatementPdf({
      layout: 'app-2025',
      pages: 3,
      legs: true,
      receiptPrefix: 'SF',
      breakRows: true,
    })
    const res = await upload(
      await ownerOf('appshop'),
      new Blob([app.bytes as Uint8Array<ArrayBuffer>]),
      'app.pdf',
    )
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      accepted: completed(app).length,
      duplicates: 0,
      rejected: 0,
      skipped: app.rows.length - completed(app).length,
    })
  }, 60_000)

  it('accepts nothing new when the same PDF comes again', async () => {
    const owner = await ownerOf('twice')
    const bytes = new Blob([statement.bytes as Uint8Array<ArrayBuffer>])
    const first = await upload(owner, bytes, 'mpesa.pdf', { password: PASSWORD })
    expect(first.body).toMatchObject({ accepted: completed(statement).length, duplicates: 0 })
    const res = await upload(owner, bytes, 'again.pdf', { password: PASSWORD })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ accepted: 0, duplicates: completed(statement).length })
  })

  it('answers 422 STATEMENT_PASSWORD_INCORRECT and _REQUIRED, and 422 for a PDF of another kind', async () => {
    const owner = await ownerOf('locked')
    const bytes = new Blob([statement.bytes as Uint8Array<ArrayBuffer>])
    const wrong = await upload(owner, bytes, 'mpesa.pdf', { password: '11111111' })
    expect(wrong).toMatchObject({ status: 422, body: { code: 'STATEMENT_PASSWORD_INCORRECT' } })
    const none = await upload(owner, bytes, 'mpesa.pdf')
    expect(none).toMatchObject({ status: 422, body: { code: 'STATEMENT_PASSWORD_REQUIRED' } })
    expect(none.body.errors[0].field).toBe('password')
    const other = await upload(
      owner,
      new Blob([makeOtherPdf() as Uint8Array<ArrayBuffer>]),
      'invoice.pdf',
    )
    expect(other.status).toBe(422)
    expect(other.body.detail).toContain('the PDF is not an M-Pesa statement')
  })

  it('joins CSV continuation rows to their transaction and refuses an unknown layout naming both headers', async () => {
    const csv = [
      HEADER,
      'SPC0000001,2024-04-02 08:15:22,Funds received from 254722111222 -,Completed,"1,500.00",,"11,500.00"',
      ',,PETER OTIENO,,,,',
    ].join('\n')
    const owner = await ownerOf('wrapped')
    const res = await upload(owner, new Blob([csv]), 'wrapped.csv')
    expect(res).toMatchObject({ status: 201, body: { accepted: 1, rejected: 0 } })
    const row = await eventually(
      async () => {
        const list = await api(p.gateway, owner).get('/api/v1/analytics/transactions?limit=500')
        return list.body.data.find((t: any) => t.receipt_number === 'SPC0000001')
      },
      20_000,
      'the wrapped row in analytics',
    )
    expect(row).toMatchObject({
      description: 'Funds received from 254722111222 - PETER OTIENO',
      counterparty_name: 'PETER OTIENO',
    })
    const unknown = await upload(owner, new Blob(['Date,Narrative,Debit,Credit\n']), 'bank.csv')
    expect(unknown.status).toBe(422)
    expect(unknown.body.detail).toContain(HEADER.replaceAll(',', ', '))
    expect(unknown.body.detail).toContain('found "Date, Narrative, Debit, Credit"')
  })

  it('imports the PDF with `mmp import --password` and says what is wrong without it', async () => {
    await createTenants(p.gateway, await p.login(), 'clipdf')
    const file = join(p.dataDir, 'mpesa-cli.pdf')
    const other = await makeStatementPdf({ pages: 2, password: PASSWORD, receiptPrefix: 'SQ' })
    await Bun.write(file, other.bytes)
    const done = completed(other).length
    const ok = await cli(p, ['import', file, '--tenant', 'clipdf', '--password', PASSWORD])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain(
      `clipdf: M-PESA personal statement, ${other.rows.length} rows read: ${done} accepted, 0 duplicates, 0 rejected, ${other.rows.length - done} skipped`,
    )
    expect(ok.stdout).toContain("reproduce the statement's totals and its running balance")
    const again = await cli(p, ['import', file, '--tenant', 'clipdf', '--password', PASSWORD])
    expect(again.stdout).toContain(`: 0 accepted, ${done} duplicates`)
    const missing = await cli(p, ['import', file, '--tenant', 'clipdf'])
    expect(missing.code).toBe(1)
    expect(missing.output).toContain('password-protected')
    const wrong = await cli(p, ['import', file, '--tenant', 'clipdf', '--password', 'nope'])
    expect(wrong.code).toBe(1)
    expect(wrong.output).toContain('the password does not open this PDF')
  }, 60_000)
})
