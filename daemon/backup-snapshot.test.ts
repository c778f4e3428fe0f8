import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { countRows } from './backup.ts'
import { snapshotDatabase } from './backup-snapshot.ts'

const dir = mkdtempSync(join(tmpdir(), 'mmp-backup-snapshot-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A WAL database of `rows` rows of about 200 bytes, as a busy tenant's analytics file. */
function bigDatabase(path: string, rows: number) {
  const db = new Database(path, { create: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('CREATE TABLE txns (id INTEGER PRIMARY KEY, tenant_id TEXT, description TEXT)')
  db.run('CREATE TABLE "odd ""name""" (x)')
  const ins = db.prepare('INSERT INTO txns (tenant_id, description) VALUES (?, ?)')
  db.transaction(() => {
    for (let i = 0; i < rows; i++) ins.run('acme', `Payment from customer ${i} `.padEnd(200, '.'))
  })()
  return db
}

describe('a database copied for a backup', () => {
  it('is copied whole, counted per table, off the thread that serves requests', async () => {
    const source = join(dir, 'analytics.db')
    const db = bigDatabase(source, 400_000)
    // The reference: the same copy on this thread, as it was taken before.
    const t0 = performance.now()
    db.run('VACUUM INTO ?', [join(dir, 'reference.db')])
    const onThread = performance.now() - t0

    let longest = 0
    let last = performance.now()
    const timer = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 1)
    const dest = join(dir, 'copy.db')
    const tables = await snapshotDatabase(source, dest)
    clearInterval(timer)
    db.close()
    console.log(
      `copy on this thread ${onThread.toFixed(0)} ms; longest stall while copied off it ${longest.toFixed(0)} ms`,
    )
    expect(tables).toEqual({ 'odd "name"': 0, txns: 400_000 })
    expect(countRows(dest)).toEqual(tables)
    expect(longest).toBeLessThan(onThread / 2)
  }, 60_000)

  it('fails with the reason when the source is no database, leaving the event loop alone', async () => {
    const err = await snapshotDatabase(join(dir, 'missing.db'), join(dir, 'never.db')).catch(
      (e) => e,
    )
    expect(String(err)).toContain('unable to open')
  })
})
