import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it, setSystemTime } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { backupRunner } from './backup-schedule.ts'
import { loadConfig } from './config.ts'

/** The run the schedule and `POST /api/v1/backups` share: concurrent runs, leftovers, keep. */
describe('backupRunner', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mmp-backup-runner-'))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))

  const setup = (name: string, keep = 10) => {
    const dataDir = join(scratch, name, 'data')
    const dir = join(scratch, name, 'backups')
    mkdirSync(join(dataDir, 'platform'), { recursive: true })
    writeFileSync(join(dataDir, 'secrets.json'), '{}')
    const db = new Database(join(dataDir, 'platform', 'auth.db'))
    db.run('CREATE TABLE users (id TEXT)')
    db.run("INSERT INTO users VALUES ('u1')")
    db.close()
    const config = loadConfig({
      dataDir,
      env: { MMP_BACKUP_DIR: dir, MMP_BACKUP_KEEP: String(keep) },
    })
    return { dir, run: backupRunner(config, 'test') }
  }

  it('lets two runs at once each finish their own copy', async () => {
    const { dir, run } = setup('concurrent')
    const [a, b] = await Promise.all([run(), run()])
    expect(a.path).not.toBe(b.path)
    for (const w of [a, b]) {
      expect(existsSync(join(w.path, 'manifest.json'))).toBe(true)
      expect(w).toMatchObject({ files: 2, databases: 1, warnings: [] })
      expect(w.bytes).toBeGreaterThan(0)
    }
    expect(readdirSync(dir).filter((n) => n.endsWith('.partial'))).toEqual([])
  })

  it('gives three runs started in the same millisecond three folders', async () => {
    const { dir, run } = setup('same-millisecond')
    setSystemTime(new Date('2030-01-01T03:00:00.000Z'))
    try {
      const runs = await Promise.all([run(), run(), run()])
      expect(new Set(runs.map((r) => r.path)).size).toBe(3)
      // The first to finish takes the plain name; the others add their pid and run number.
      expect(runs.map((r) => r.backup).sort()[0]).toBe('mmp-backup-20300101T030000000Z')
      for (const w of runs) expect(existsSync(join(w.path, 'manifest.json'))).toBe(true)
    } finally {
      setSystemTime()
    }
    expect(readdirSync(dir).filter((n) => n.endsWith('.partial'))).toEqual([])
  })

  it('removes a partial copy a dead process left, of the old name or with its pid', async () => {
    const { dir, run } = setup('leftovers')
    // A pid above the kernel's maximum (2^22) names no process.
    const dead = [
      'mmp-backup-20300101T000000000Z.partial',
      'mmp-backup-20300101T000001000Z.4194999.partial',
    ]
    for (const n of dead) mkdirSync(join(dir, n), { recursive: true })
    await run()
    expect(readdirSync(dir).filter((n) => n.endsWith('.partial'))).toEqual([])
  })

  it('keeps the newest backup.keep copies', async () => {
    const { dir, run } = setup('keep', 2)
    const first = await run()
    await run()
    const third = await run()
    expect(third.pruned).toBe(1)
    expect(readdirSync(dir)).toHaveLength(2)
    expect(existsSync(first.path)).toBe(false)
  })

  it('throws when the folder cannot be written, leaving nothing behind', async () => {
    const { dir, run } = setup('blocked')
    mkdirSync(join(scratch, 'blocked'), { recursive: true })
    writeFileSync(dir, 'a file where the folder should be')
    await expect(run()).rejects.toThrow()
    expect(readdirSync(join(scratch, 'blocked')).sort()).toEqual(['backups', 'data'])
  })
})
