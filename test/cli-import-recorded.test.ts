import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cli } from './support/cli.ts'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * `mmp import` goes through the statement import door the dashboard uses: the import is recorded
 * with its proof, listed by `GET /api/v1/statements` and by `mmp imports`, exactly like an upload.
 */
const orgCsv = readFileSync(
  join(import.meta.dir, 'fixtures/statements/org-portal/utility-account-2024-03.csv'),
  'utf8',
)

describe('mmp import records the import like the dashboard does', () => {
  let p: TestPlatform
  let token: string
  const dir = mkdtempSync(join(tmpdir(), 'mmp-cli-import-'))

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,parser,categorizer,broker' })
    token = await p.login()
    await createTenants(p.gateway, token, 'cli-rec', 'cli-rej')
  }, 60_000)

  afterAll(async () => {
    await p?.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it('lists a CLI import with its counters and proof in GET /api/v1/statements and mmp imports', async () => {
    const file = join(dir, 'march.csv')
    writeFileSync(file, orgCsv)
    const r = await cli(p, ['import', file, '--tenant', 'cli-rec', '--json'])
    expect(r.code).toBe(0)
    const answer = JSON.parse(r.stdout)
    expect(answer).toMatchObject({
      tenant_id: 'cli-rec',
      read: 34,
      accepted: 34,
      layout: 'org-portal',
      proof: { verdict: 'proven' },
    })
    expect(answer.import_id).toBeString()

    const listed = await api(p.gateway, token).get('/api/v1/statements?tenant_id=cli-rec')
    expect(listed.status).toBe(200)
    expect(listed.body.data).toHaveLength(1)
    expect(listed.body.data[0]).toMatchObject({
      import_id: answer.import_id,
      file_name: 'march.csv',
      read: 34,
      accepted: 34,
      layout: 'org-portal',
      proof: { verdict: 'proven' },
    })

    const human = await cli(p, ['imports', '--tenant', 'cli-rec'])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(`${answer.import_id}`)
    expect(human.stdout).toContain('march.csv  org-portal: 34 read, 34 accepted')
    expect(human.stdout).toContain('proof: the rows read reproduce')
    const json = await cli(p, ['imports', '--tenant', 'cli-rec', '--json'])
    expect(JSON.parse(json.stdout)).toEqual(listed.body.data)

    // The same file again: recorded again, every row a duplicate, nothing added.
    const again = await cli(p, ['import', file, '--tenant', 'cli-rec'])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('34 rows read: 0 accepted, 34 duplicates')
    const twice = await api(p.gateway, token).get('/api/v1/statements?tenant_id=cli-rec')
    expect(twice.body.data).toHaveLength(2)
  }, 60_000)

  it('exits 1 naming the rejected rows when every row is rejected, and the import is still recorded', async () => {
    const lines = orgCsv.split(/\r?\n/)
    const header = lines.findIndex((l) => l.startsWith('Receipt No'))
    // Every row's Completion Time made unreadable: each row is rejected, none is stored.
    const broken = [
      ...lines.slice(0, header + 1),
      ...lines
        .slice(header + 1)
        .map((l) =>
          l.split(',').length > 5 ? l.replace(/\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}/g, 'soon') : l,
        ),
    ].join('\n')
    const file = join(dir, 'broken.csv')
    writeFileSync(file, broken)
    const r = await cli(p, ['import', file, '--tenant', 'cli-rej'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/ 0 accepted, 0 duplicates, \d+ rejected/)
    expect(r.output).toMatch(/mmp import: \d+ of \d+ rows were rejected/)
    const listed = await api(p.gateway, token).get('/api/v1/statements?tenant_id=cli-rej')
    expect(listed.body.data[0]).toMatchObject({ file_name: 'broken.csv', accepted: 0 })
    expect(listed.body.data[0].rejected).toBeGreaterThan(0)
  }, 60_000)

  it('says what to do for a missing file, a tenant that does not exist and a locked PDF', async () => {
    const missing = await cli(p, ['import', join(dir, 'nope.csv'), '--tenant', 'cli-rec'])
    expect(missing.code).toBe(1)
    expect(missing.output).toContain('no such file')
    const file = join(dir, 'march.csv')
    writeFileSync(file, orgCsv)
    const ghost = await cli(p, ['import', file, '--tenant', 'no-such-shop', '--json'])
    expect(ghost.code).toBe(1)
    expect(ghost.stdout).toBe('')
    expect(ghost.output).toContain('no-such-shop does not exist')
  }, 60_000)
})
