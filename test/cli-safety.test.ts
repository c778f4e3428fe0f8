import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { api, OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

/**
 * The CLI refuses what an operator did not mean, each time with one line on stderr and a non-zero
 * exit: a billing cycle without confirmation, unknown feature flags and values, a taken port, a
 * --url that is not mmp, a missing data dir. What it prints as data is plain JSON with --json.
 */
const root = join(import.meta.dir, '..')

describe('the CLI, run by an operator', () => {
  let p: TestPlatform
  let operator: string
  let foreign: ReturnType<typeof Bun.serve>

  // Asynchronous: the foreign server below lives in this process and must answer meanwhile.
  const mmp = async (args: string[], env: Record<string, string> = {}) => {
    const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), ...args], {
      cwd: root,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      env: {
        ...process.env,
        MMP_PORT_OFFSET: String(p.offset),
        MMP_DATA_DIR: p.dataDir,
        MMP_OPERATOR_EMAIL: OPERATOR.email,
        MMP_OPERATOR_PASSWORD: OPERATOR.password,
        ...env,
      },
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { code, stdout, stderr }
  }
  const oneLine = (r: { code: number; stderr: string }, pattern: RegExp) => {
    expect(r.code).not.toBe(0)
    expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(pattern)])
    expect(r.stderr).not.toContain('    at ')
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,billing,broker' })
    operator = await p.login()
    await createTenants(p.gateway, operator, 'shop', { id: 'duka', plan: 'pro' })
    foreign = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () =>
        new Response('<h1>Not Found</h1>', {
          status: 404,
          headers: { 'content-type': 'text/html' },
        }),
    })
  }, 30_000)

  afterAll(async () => {
    foreign?.stop(true)
    await p?.dispose()
  })

  const periodEnd = async (tenant: string) =>
    (await api(p.gateway, operator).get(`/api/v1/billing/subscriptions/${tenant}`)).body
      .current_period_end as string

  it('shows what a billing cycle would do and refuses to run it without a terminal or --yes', async () => {
    const before = await periodEnd('duka')
    const r = await mmp(['billing', 'run-cycle', '--at', '2099-01-01T00:00:00Z'])
    oneLine(r, /^error: run-cycle would change 2 tenant\(s\).*pass --yes/)
    expect(r.stdout).toContain('The billing cycle as of 2099-01-01T00:00:00.000Z would:')
    expect(r.stdout).toMatch(/duka\s+pro\s+invoice \d+ ended periods .*KES/)
    expect(r.stdout).toMatch(/shop\s+free/)
    expect(await periodEnd('duka')).toBe(before)
  })

  it('prints the preview as JSON with --dry-run --json, and runs with --yes', async () => {
    const dry = await mmp([
      'billing',
      'run-cycle',
      '--at',
      '2099-01-01T00:00:00Z',
      '--dry-run',
      '--json',
    ])
    expect(dry.code).toBe(0)
    const preview = JSON.parse(dry.stdout)
    expect(preview.tenants.map((t: { tenant: string }) => t.tenant).sort()).toEqual([
      'duka',
      'shop',
    ])
    expect(preview.tenants.find((t: { tenant: string }) => t.tenant === 'duka')).toMatchObject({
      plan: 'pro',
      periods: expect.any(Number),
      estimated_amount: expect.any(Number),
    })
    const at = new Date(Date.parse(await periodEnd('duka')) + 1000).toISOString()
    const run = await mmp(['billing', 'run-cycle', '--at', at, '--yes', '--json'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ renewed: expect.arrayContaining(['duka']) })
    // Without --json the report is words.
    const again = await mmp(['billing', 'run-cycle', '--at', at, '--yes'])
    expect(again.code).toBe(0)
    expect(again.stdout).toStartWith(`billing cycle as of ${at}`)
  })

  it('refuses a feature flag the plans do not have, naming the ones they do', async () => {
    oneLine(
      await mmp(['tenant', 'features', 'duka', 'turbo=on']),
      /^error: unknown feature 'turbo': the features are advanced_analytics, bulk_upload, api_access$/,
    )
  })

  it('refuses a feature value other than on, off, true, false or default', async () => {
    oneLine(
      await mmp(['tenant', 'features', 'duka', 'advanced_analytics=maybe']),
      /^error: advanced_analytics=maybe: the value must be one of on, true, off, false, default$/,
    )
    oneLine(await mmp(['tenant', 'features', 'duka', 'advanced_analytics']), /is not flag=value/)
  })

  it('sets a valid flag and prints plain JSON with --json', async () => {
    const r = await mmp(['tenant', 'features', 'duka', 'advanced_analytics=off', '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ features: { advanced_analytics: false } })
    const list = await mmp(['tenant', 'list', '--json'])
    expect(JSON.parse(list.stdout).map((t: { id: string }) => t.id)).toContain('duka')
  })

  it('says so in one line when --url is not an mmp gateway, or not reachable', async () => {
    oneLine(
      await mmp(['tenant', 'list', '--url', `http://127.0.0.1:${foreign.port}`]),
      /^error: http:\/\/127\.0\.0\.1:\d+ is not an mmp gateway \(GET \/health answered 404 text\/html\); check --url$/,
    )
    oneLine(
      await mmp(['tenant', 'list', '--url', 'http://127.0.0.1:9']),
      /^error: the platform is not reachable at http:\/\/127\.0\.0\.1:9 .*check --url$/,
    )
  })

  it('names the taken port when mmp serve cannot listen, before starting anything', async () => {
    const r = await mmp(['serve'], { MMP_DATA_DIR: join(p.dataDir, 'other') })
    oneLine(r, /^error: port \d+ \(\w+\) is in use: .*--port-offset/)
  })

  it('says the data dir is missing instead of failing on a file in it', async () => {
    oneLine(
      await mmp(['backup', '--to', '/tmp/never-written'], { MMP_DATA_DIR: '/nonexistent/data' }),
      /^error: no data dir at \/nonexistent\/data/,
    )
    oneLine(
      await mmp(['tenant', 'list'], {
        MMP_DATA_DIR: '/nonexistent/data',
        MMP_OPERATOR_PASSWORD: '',
      }),
      /^error: no data dir at \/nonexistent\/data .*--data-dir/,
    )
  })
})
