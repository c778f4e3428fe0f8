import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cli } from './support/cli.ts'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * Every client command with `--json` prints only JSON on stdout (nothing before or after it),
 * prints words without it, and exits non-zero when what it was asked for did not happen. The
 * commands needing no platform are in cli-json.test.ts; backup, restore and doctor have tests of
 * their own.
 */
const orgCsv = readFileSync(
  join(import.meta.dir, 'fixtures/statements/org-portal/utility-account-2024-03.csv'),
  'utf8',
)

describe('every mmp command with --json, against a running platform', () => {
  let p: TestPlatform
  const dir = mkdtempSync(join(tmpdir(), 'mmp-cli-json-all-'))

  beforeAll(async () => {
    p = await startTestPlatform()
  }, 90_000)

  afterAll(async () => {
    await p?.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs a command with --json: it must exit 0 and its stdout must be one JSON document. */
  const json = async (...args: string[]) => {
    const r = await cli(p, [...args, '--json'])
    expect({ args, code: r.code, output: r.code === 0 ? '' : r.output }).toEqual({
      args,
      code: 0,
      output: '',
    })
    let parsed: unknown
    expect(() => {
      parsed = JSON.parse(r.stdout)
    }).not.toThrow()
    return parsed as any
  }
  /** Runs a command without --json: words, not a JSON document. */
  const words = async (...args: string[]) => {
    const r = await cli(p, args)
    expect({ args, code: r.code }).toEqual({ args, code: 0 })
    expect(() => JSON.parse(r.stdout)).toThrow()
    return r.stdout
  }

  /**
   * A Pro tenant of the test's own, made when the test starts: the billing test's cycle two
   * months on invoices (and, unpaid, suspends) every tenant there is at that moment.
   */
  const shopOf = async (id: string) => {
    await createTenants(p.gateway, await p.login(), { id, plan: 'pro' })
    return id
  }

  it('user invite, list and remove', async () => {
    const shop = await shopOf('jsonusers')
    const u = await json(
      'user',
      'invite',
      'ann@jsonshop.test',
      '--tenant',
      shop,
      '--role',
      'Analyst',
    )
    expect(u).toMatchObject({ email: 'ann@jsonshop.test', role: 'Analyst' })
    expect((await json('user', 'list', '--tenant', shop)).length).toBeGreaterThanOrEqual(2)
    expect(await words('user', 'list', '--tenant', shop)).toContain('ann@jsonshop.test')
    expect(await json('user', 'remove', u.id, '--tenant', shop)).toEqual({
      id: u.id,
      tenant_id: shop,
      removed: true,
    })
  }, 60_000)

  it('apikey create, list and revoke', async () => {
    const shop = await shopOf('jsonkeys')
    const k = await json('apikey', 'create', 'till-server', '--tenant', shop)
    expect(k.key).toStartWith('mmp_sk_')
    expect((await json('apikey', 'list', '--tenant', shop)).map((x: any) => x.id)).toContain(k.id)
    expect(await json('apikey', 'revoke', k.id, '--tenant', shop)).toEqual({
      id: k.id,
      revoked: true,
    })
  }, 60_000)

  it('import, imports and demo seed', async () => {
    const shop = await shopOf('jsonimport')
    const file = join(dir, 'statement.csv')
    writeFileSync(file, orgCsv)
    const imported = await json('import', file, '--tenant', shop)
    expect(imported).toMatchObject({ tenant_id: shop, read: 34, accepted: 34 })
    const listed = await json('imports', '--tenant', shop)
    expect(listed[0].import_id).toBe(imported.import_id)
    const seeded = await json(
      'demo',
      'seed',
      '--tenant',
      shop,
      '--days',
      '5',
      '--end',
      '2024-01-31',
    )
    expect(seeded).toMatchObject({ tenant_id: shop, days_written: 5, rejected: 0 })
    expect(seeded.accepted).toBeGreaterThan(0)
    expect(
      await words('demo', 'seed', '--tenant', shop, '--days', '5', '--end', '2024-01-31'),
    ).toContain('0 transactions written')
  }, 60_000)

  it('billing plans, subscription, usage, run-cycle, invoices and invoice-pdf', async () => {
    // A tenant of its own: the cycle two months on invoices it and, unpaid, suspends it.
    await createTenants(p.gateway, await p.login(), { id: 'jsonbill', plan: 'pro' })
    const plans = await json('billing', 'plans')
    expect(plans.map((x: any) => x.id)).toEqual(
      expect.arrayContaining(['free', 'pro', 'enterprise']),
    )
    expect(await words('billing', 'plans')).toMatch(/pro\s+Pro\s+pro\s+KES 2,500\.00/)
    expect(await json('billing', 'subscription', 'jsonbill')).toMatchObject({ plan: 'pro' })
    expect(await words('billing', 'subscription', 'jsonbill')).toContain(
      'jsonbill: pro plan, active',
    )
    expect((await json('billing', 'usage', 'jsonbill')).metrics).toHaveProperty('transactions')
    expect(await words('billing', 'usage', 'jsonbill')).toMatch(/transactions\s+\d+/)
    // Two months on: the Pro period ended, so the cycle invoices it.
    const at = new Date(Date.now() + 62 * 86_400_000).toISOString()
    const preview = await json('billing', 'run-cycle', '--at', at, '--dry-run')
    expect(preview.tenants.map((t: any) => t.tenant)).toContain('jsonbill')
    const refused = await cli(p, ['billing', 'run-cycle', '--at', at, '--json'])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    const cycle = await json('billing', 'run-cycle', '--at', at, '--yes')
    expect(cycle.invoices.length).toBeGreaterThan(0)
    const invoices = await json('billing', 'invoices', 'jsonbill')
    expect(invoices.length).toBeGreaterThan(0)
    expect(await words('billing', 'invoices', 'jsonbill')).toContain(invoices[0].number)
    const out = join(dir, 'invoice.pdf')
    const pdf = await json('billing', 'invoice-pdf', invoices[0].id, '--out', out)
    expect(pdf).toMatchObject({ id: invoices[0].id, file: out })
    expect(existsSync(out)).toBe(true)
  }, 90_000)

  it('payments reconcile and simulate-c2b, audit verify, replay webhooks and events', async () => {
    expect(await json('payments', 'reconcile')).toHaveProperty('checked')
    const paid = await json(
      'payments',
      'simulate-c2b',
      '--shortcode',
      '600100',
      '--amount',
      '250',
      '--phone',
      '0712345678',
    )
    expect(paid).toBeObject()
    expect(await json('audit', 'verify')).toMatchObject({ ok: true })
    expect(await json('replay', 'webhooks', '--dead')).toHaveProperty('replayed')
    expect(
      await json('replay', 'events', '--topic', 'mobilemoney.usage', '--since', '1h'),
    ).toMatchObject({
      topic: 'mobilemoney.usage',
    })
  }, 60_000)

  it('tenant create, list, show, upgrade, suspend, resume, features and delete', async () => {
    const made = await json(
      'tenant',
      'create',
      '--id',
      'jsonten',
      '--name',
      'Json Ten',
      '--admin-email',
      'o@jsonten.test',
    )
    expect(made).toMatchObject({ id: 'jsonten' })
    expect((await json('tenant', 'list')).map((t: any) => t.id)).toContain('jsonten')
    expect(await words('tenant', 'show', 'jsonten')).toContain('jsonten')
    expect(await json('tenant', 'upgrade', 'jsonten', 'pro')).toMatchObject({ plan: 'pro' })
    expect(await json('tenant', 'suspend', 'jsonten')).toMatchObject({ status: 'suspended' })
    expect(await json('tenant', 'resume', 'jsonten')).toMatchObject({ status: 'active' })
    expect(await json('tenant', 'features', 'jsonten')).toHaveProperty('features')
    expect(await json('tenant', 'delete', 'jsonten', '--confirm', 'jsonten')).toHaveProperty(
      'rows_erased',
    )
  }, 90_000)

  it('exits non-zero with nothing on stdout for a topic that does not exist', async () => {
    const r = await cli(p, ['replay', 'events', '--topic', 'nope', '--since', '1h', '--json'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.output).toContain('no topic nope')
  })
})
