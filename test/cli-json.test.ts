/**
 * Issue 18: `--json` prints plain JSON on stdout (no banners) and a refusal exits non-zero with one
 * line on stderr, never a stack trace. The commands that need no running platform are run here;
 * the client commands share `printJson` (cmd/shared.ts).
 */
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const dir = mkdtempSync(join(tmpdir(), 'mmp-cli-json-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const mmp = (...args: string[]) => {
  const r = Bun.spawnSync(['bun', join(import.meta.dir, '../cmd/main.ts'), ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() }
}

describe('mmp --json', () => {
  it('prints only JSON for version, init and migrate', () => {
    const data = join(dir, 'data')
    for (const args of [
      ['version', '--json'],
      ['init', '--json', '--data-dir', data],
      ['migrate', '--json', '--data-dir', data],
    ]) {
      const r = mmp(...args)
      expect({ args, code: r.code }).toEqual({ args, code: 0 })
      expect(() => JSON.parse(r.out)).not.toThrow()
    }
    expect(JSON.parse(mmp('migrate', '--json', '--data-dir', data).out).databases).toBeGreaterThan(
      0,
    )
  })

  it('exits non-zero with one line and no stack trace when refused', () => {
    const r = mmp('migrate', '--json', '--data-dir', join(dir, 'missing'))
    expect(r.code).not.toBe(0)
    expect(r.out).toBe('')
    expect(r.err).toContain('no data dir')
    expect(r.err).not.toMatch(/\n\s+at /)
  })

  it('keeps stdout empty on a usage mistake with --json: one line on stderr instead of the usage', () => {
    for (const args of [
      ['user', 'invite', '--tenant', 'x', '--json'],
      ['nosuch', '--json'],
    ]) {
      const r = mmp(...args)
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code: 1, out: '' })
      expect(r.err.trim().split('\n')).toHaveLength(1)
    }
    // Without --json the usage text helps a person.
    expect(mmp('user', 'invite', '--tenant', 'x').out).toContain('USAGE')
  })
})
