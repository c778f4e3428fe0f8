import { join } from 'node:path'
import { spawn } from 'bun'
import { OPERATOR, type TestPlatform } from './platform.ts'

const root = join(import.meta.dir, '..', '..')

/**
 * Runs an `mmp` command against a test platform as the operator would, through its gateway
 * (`--url`), and returns its exit code and what it printed.
 *
 * @example
 * const r = await cli(p, ['import', file, '--tenant', 'duka'])
 * expect(r.code).toBe(0)
 */
export async function cli(
  p: TestPlatform,
  args: string[],
): Promise<{ code: number; stdout: string; output: string }> {
  const proc = spawn([process.execPath, join(root, 'cmd/main.ts'), ...args, '--url', p.gateway], {
    cwd: root,
    env: {
      ...process.env,
      MMP_DATA_DIR: p.dataDir,
      MMP_PORT_OFFSET: String(p.offset),
      MMP_OPERATOR_EMAIL: OPERATOR.email,
      MMP_OPERATOR_PASSWORD: OPERATOR.password,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout: out, output: out + err }
}
