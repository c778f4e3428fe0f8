import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'

/** `mmp doctor` on a healthy install, a loose one, one under a low open-files limit, and none. */
const root = join(import.meta.dir, '..')

async function doctor(
  dataDir: string,
  opts: { ulimit?: number; env?: Record<string, string> } = {},
) {
  const cmd = [
    process.execPath,
    join(root, 'cmd/main.ts'),
    'doctor',
    '--json',
    '--data-dir',
    dataDir,
  ]
  const proc = Bun.spawn(
    opts.ulimit ? ['sh', '-c', `ulimit -n ${opts.ulimit} && exec "$@"`, 'sh', ...cmd] : cmd,
    {
      cwd: root,
      env: { ...process.env, MMP_OPERATOR_PASSWORD: OPERATOR.password, ...opts.env },
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  const report = JSON.parse(stdout) as {
    ok: boolean
    checks: Array<{ name: string; status: string; detail: string; fix?: string }>
  }
  const by = Object.fromEntries(report.checks.map((c) => [c.name, c]))
  return { code, report, by }
}

describe('mmp doctor', () => {
  let p: TestPlatform
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-doctor-'))

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,broker' })
  }, 30_000)

  afterAll(async () => {
    await p?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('finds nothing to fix on a running install', async () => {
    const { code, report, by } = await doctor(p.dataDir, {
      env: { MMP_PORT_OFFSET: String(p.offset) },
    })
    expect(report.checks.filter((c) => c.status === 'fail')).toEqual([])
    expect(code).toBe(0)
    expect(by.permissions).toMatchObject({ status: 'ok' })
    expect(by['signing keys']).toMatchObject({ status: 'ok' })
    expect(by.secrets).toMatchObject({ status: 'ok' })
    expect(by.broker).toMatchObject({
      status: 'ok',
      detail: expect.stringContaining("accepts mmp's credentials"),
    })
    expect(by.clock).toMatchObject({ status: 'ok' })
    expect(by['free disk']).toMatchObject({ status: 'ok' })
  })

  it('reports loose permissions and a low open-files limit, with what to do', async () => {
    const dataDir = join(scratch, 'loose')
    const init = Bun.spawnSync([
      process.execPath,
      join(root, 'cmd/main.ts'),
      'init',
      '--data-dir',
      dataDir,
    ])
    expect(init.exitCode).toBe(0)
    chmodSync(dataDir, 0o755)
    chmodSync(join(dataDir, 'secrets.json'), 0o644)
    const { code, report, by } = await doctor(dataDir, { ulimit: 64 })
    expect(code).toBe(1)
    expect(report.ok).toBe(false)
    expect(by.permissions).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining(`${join(dataDir, 'secrets.json')} 644`),
      fix: expect.stringContaining('mmp init'),
    })
    expect(by['open files']).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^ulimit -n 64: room for 8 open databases/),
      fix: expect.stringContaining('LimitNOFILE'),
    })
    // Text output: one line per check, FAIL marked, the fix under it.
    const text = Bun.spawnSync([
      process.execPath,
      join(root, 'cmd/main.ts'),
      'doctor',
      '--data-dir',
      dataDir,
    ])
    expect(text.exitCode).toBe(1)
    expect(text.stdout.toString()).toMatch(/^FAIL {2}permissions: .*\n {6}fix: run `mmp init/m)
  })

  it('fails when an external broker does not answer', async () => {
    const { code, by } = await doctor(p.dataDir, { env: { MMP_MQTT_URL: 'mqtt://127.0.0.1:9' } })
    expect(code).toBe(1)
    expect(by.broker).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('MMP_MQTT_URL'),
    })
  })

  it('says there is no data dir', async () => {
    const { code, by } = await doctor(join(scratch, 'none'))
    expect(code).toBe(1)
    expect(by['data dir']).toMatchObject({
      status: 'fail',
      detail: `no data dir at ${join(scratch, 'none')}`,
    })
  })
})
