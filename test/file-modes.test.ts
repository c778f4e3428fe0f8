import { afterAll, describe, expect, it } from 'bun:test'
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const root = join(import.meta.dir, '..')

/** Every path under `dir` with its permission bits, e.g. `['tenants/acme/analytics.db', 0o600]`. */
function modes(dir: string): Array<[string, number, boolean]> {
  const out: Array<[string, number, boolean]> = []
  const walk = (path: string, rel: string) => {
    const st = lstatSync(path)
    out.push([rel || '.', st.mode & 0o777, st.isDirectory()])
    if (st.isDirectory()) for (const n of readdirSync(path)) walk(join(path, n), join(rel, n))
  }
  walk(dir, '')
  return out
}

const loose = (dir: string) =>
  modes(dir).filter(([, mode, isDir]) => mode !== (isDir ? 0o700 : 0o600))

describe('files at rest', () => {
  const dirs: string[] = []
  let p: TestPlatform | null = null
  afterAll(async () => {
    await p?.dispose()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it('makes the data dir 0700 and every file 0600 on `mmp init`, whatever the umask', () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'mmp-modes-')), 'data')
    dirs.push(dataDir)
    const run = Bun.spawnSync(
      [
        'sh',
        '-c',
        `umask 000 && exec "$0" cmd/main.ts init --data-dir "$1"`,
        process.execPath,
        dataDir,
      ],
      { cwd: root, env: { ...process.env, MMP_LOG_FORMAT: 'json' } },
    )
    expect(run.exitCode).toBe(0)
    expect(modes(dataDir).length).toBeGreaterThan(4)
    expect(loose(dataDir)).toEqual([])
  })

  it('corrects a loose install on start and keeps files made later private', async () => {
    // The platform is started with umask 000: only its own care keeps files private.
    const withOpenUmask = async <T>(fn: () => Promise<T>) => {
      const previous = process.umask(0)
      try {
        return await fn()
      } finally {
        process.umask(previous)
      }
    }
    p = await withOpenUmask(() => startTestPlatform())
    const operator = await p.login()
    chmodSync(p.dataDir, 0o755)
    chmodSync(join(p.dataDir, 'platform', 'auth.db'), 0o644)
    await p.stop()
    await withOpenUmask(() => p!.restart())
    expect(loose(p.dataDir)).toEqual([])
    await createTenants(p.gateway, operator, 'private-co', { id: 'pro-private', plan: 'pro' })
    const made = modes(p.dataDir).filter(([rel]) => rel.includes('pro-private'))
    expect(made.length).toBeGreaterThan(1)
    expect(loose(p.dataDir)).toEqual([])
  }, 60_000)
})
