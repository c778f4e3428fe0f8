import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as XLSX from '@e965/xlsx'
import Papa from 'papaparse'
import { cli } from './support/cli.ts'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * A statement proves itself, end to end (DESIGN §16): an org-portal statement uploaded through
 * the gateway, as CSV and as the portal's XLSX, answers every row in one counter and its proof;
 * one with a row deleted is stored with the finding, listed with it, and `mmp import` exits 1.
 */
const orgCsv = readFileSync(
  join(import.meta.dir, 'fixtures/statements/org-portal/utility-account-2024-03.csv'),
  'utf8',
)
const lines = orgCsv.split(/\r?\n/)
const gone = lines.findIndex((l) => l.includes('FAITH **** CHEBET'))
/** The statement with one customer's payment of KES 6,000 deleted. */
const withoutFaith = [...lines.slice(0, gone), ...lines.slice(gone + 1)].join('\n')

function xlsx(csv: string): ArrayBuffer {
  const rows = Papa.parse<string[]>(csv.trim()).data
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(rows), 'Statement')
  return XLSX.write(book, { type: 'array', bookType: 'xlsx' }) as ArrayBuffer
}

describe('a statement that proves itself, through the gateway', () => {
  let p: TestPlatform
  let token: string
  const dir = mkdtempSync(join(tmpdir(), 'mmp-proof-'))

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,parser,categorizer,broker' })
    token = await p.login()
    await createTenants(
      p.gateway,
      token,
      'proof-csv',
      'proof-xlsx',
      'proof-gap',
      'proof-cli',
      'proof-cli-gap',
    )
  }, 60_000)

  afterAll(async () => {
    await p?.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  const upload = async (tenant: string, name: string, body: BlobPart) => {
    const form = new FormData()
    form.append('file', new File([body], name))
    const res = await fetch(`${p.gateway}/api/v1/statements?tenant_id=${tenant}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  it('answers every row in one counter and a proven statement, as CSV and as XLSX', async () => {
    for (const [tenant, name, body] of [
      ['proof-csv', 'march.csv', orgCsv],
      ['proof-xlsx', 'march.xlsx', xlsx(orgCsv)],
    ] as const) {
      const r = await upload(tenant, name, body)
      expect(r.status).toBe(201)
      const b = r.body
      expect(b).toMatchObject({
        read: 34,
        accepted: 34,
        duplicates: 0,
        rejected: 0,
        skipped: 0,
        layout: 'org-portal',
        proof: {
          verdict: 'proven',
          totals: {
            match: true,
            file: {
              opening_balance: 12450,
              closing_balance: 0,
              paid_in: 72414.5,
              paid_out: 84864.5,
            },
          },
          balance: { chains: true, break_count: 0 },
          finding: null,
        },
      })
      expect(b.read).toBe(b.accepted + b.duplicates + b.rejected + b.skipped)
    }
  })

  it('stores a statement that does not add up with its finding, and lists it', async () => {
    const r = await upload('proof-gap', 'gap.csv', withoutFaith)
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      read: 33,
      accepted: 33,
      proof: { verdict: 'does_not_add_up', totals: { match: false }, balance: { chains: false } },
    })
    expect(r.body.proof.finding).toContain(
      'missing KES 6,000.00 of money in between 9 Mar 2024 01:17 and 9 Mar 2024 11:06',
    )
    const listed = await api(p.gateway, token).get('/api/v1/statements?tenant_id=proof-gap')
    expect(listed.status).toBe(200)
    expect(listed.body.data[0]).toMatchObject({
      import_id: r.body.import_id,
      file_name: 'gap.csv',
      read: 33,
      layout: 'org-portal',
      proof: { verdict: 'does_not_add_up', finding: r.body.proof.finding },
    })
  })

  it('mmp import exits 1 with one line on stderr when the statement does not add up, 0 when it does', async () => {
    const good = join(dir, 'good.csv')
    const gap = join(dir, 'gap.csv')
    writeFileSync(good, orgCsv)
    writeFileSync(gap, withoutFaith)
    const ok = await cli(p, ['import', good, '--tenant', 'proof-cli'])
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('34 rows read: 34 accepted')
    const bad = await cli(p, ['import', gap, '--tenant', 'proof-cli-gap', '--json'])
    expect(bad.code).toBe(1)
    const json = JSON.parse(bad.stdout)
    expect(json).toMatchObject({ read: 33, proof: { verdict: 'does_not_add_up' } })
    const stderr = bad.output.slice(bad.stdout.length).trim().split('\n')
    expect(stderr).toHaveLength(1)
    expect(stderr[0]).toStartWith('mmp import: This statement is missing KES 6,000.00')
  })
})
