import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

const root = join(import.meta.dir, '..')

describe('scheduled backups', () => {
  let p: TestPlatform | null = null
  const dir = mkdtempSync(join(tmpdir(), 'mmp-scheduled-'))

  afterAll(async () => {
    await p?.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it('are taken by the daemon on schedule, the oldest pruned past backup.keep', async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,broker',
      env: { MMP_BACKUP_SCHEDULE: '2s', MMP_BACKUP_KEEP: '2', MMP_BACKUP_DIR: dir },
    })
    const written = () =>
      p!
        .logs()
        .split('\n')
        .filter((l) => l.includes('"backup written"'))
    await eventually(() => written().length >= 3, 20_000, 'three scheduled backups')
    const kept = readdirSync(dir).filter((n) => !n.endsWith('.partial'))
    expect(kept).toHaveLength(2)
    expect(JSON.parse(written()[2]!)).toMatchObject({ pruned: 1, backup: expect.any(String) })
    for (const name of kept) {
      const r = Bun.spawnSync([
        process.execPath,
        join(root, 'cmd/main.ts'),
        'backup',
        'verify',
        join(dir, name),
      ])
      expect([name, r.exitCode]).toEqual([name, 0])
    }
  }, 40_000)
})
