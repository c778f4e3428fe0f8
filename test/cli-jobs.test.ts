import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { OPERATOR, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const root = join(import.meta.dir, '..')

/**
 * A long operator action answered 202 is followed by the CLI: it asks for the job at once
 * (`Prefer: respond-async`), says on stderr that it runs and when it is done, and exits 0 with the
 * result, or 1 with the job's problem in one line.
 */
describe('the CLI following a job', () => {
  let p: TestPlatform
  const mmp = async (...args: string[]) => {
    const proc = Bun.spawn([process.execPath, join(root, 'cmd/main.ts'), ...args], {
      cwd: root,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      env: {
        ...process.env,
        NO_COLOR: '1',
        MMP_PORT_OFFSET: String(p.offset),
        MMP_DATA_DIR: p.dataDir,
        MMP_OPERATOR_EMAIL: OPERATOR.email,
        MMP_OPERATOR_PASSWORD: OPERATOR.password,
      },
    })
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { code, stdout, stderr }
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,billing,broker' })
    await createTenants(p.gateway, await p.login(), 'jobs-ok', 'jobs-bad')
  }, 60_000)
  afterAll(() => p.dispose())

  it('shows a tier move running as a job and exits 0 once it succeeded', async () => {
    const r = await mmp('tenant', 'upgrade', 'jobs-ok', 'pro')
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 })
    expect(r.stderr).toMatch(/^moving jobs-ok: running as job job_[0-9a-f]{32}$/m)
    expect(r.stderr).toMatch(/^moving jobs-ok: done in \d+\.\d s$/m)
    expect(r.stdout).toContain('plan pro, isolation schema')
  }, 30_000)

  it('exits 1 with the problem in one line when the platform dies under the job', async () => {
    // The platform kills itself between the copy and the switch of the move.
    expect(await p.stop()).toBe(0)
    await p.restart({ MMP_ALLOW_FAULTS: '1', MMP_FAULT: 'tenant.move.after_copy' })
    const r = await mmp('tenant', 'upgrade', 'jobs-bad', 'pro')
    expect(await p.exited()).toBe('SIGKILL')
    expect(r.code).toBe(1)
    const lines = r.stderr.trimEnd().split('\n')
    // The job was answered (202) and followed until the platform stopped answering; or, on a
    // slow machine, the process died before the request's answer left.
    if (lines[0]?.startsWith('moving jobs-bad: running as job'))
      expect(lines.slice(1)).toEqual([
        expect.stringMatching(
          /^error: moving jobs-bad: the platform stopped answering while job job_[0-9a-f]{32} ran \((ECONNREFUSED|ECONNRESET)\); start it again: the move resumes or rolls back$/,
        ),
      ])
    else expect(lines).toEqual([expect.stringMatching(/^(error|mmp): /)])
    expect(r.stderr).not.toContain('    at ')
    await p.restart({ MMP_FAULT: '' })
  }, 60_000)
})
