import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { failureLog, startCheckpointer } from './checkpointer.ts'
import { type Db, openDatabase } from './db.ts'
import { eventually } from './testing.ts'

const dir = mkdtempSync(join(tmpdir(), 'mmp-checkpointer-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const threshold = (db: Db) =>
  db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!
    .wal_autocheckpoint

const walSize = (db: Db) => {
  const file = `${db.path}-wal`
  return existsSync(file) ? statSync(file).size : 0
}

/** The WAL's frames, and how many of them are copied into the database file. */
const walFrames = (db: Db) =>
  db.sqlite.query<{ log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(NOOP)').get()!

/** A table of 2 KB rows: each transaction below adds about 5 pages to the WAL. */
function openLoaded(name: string): { db: Db; load: () => void } {
  const db = openDatabase(join(dir, name), { migrations: [] })
  db.sqlite.run('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)')
  const insert = db.sqlite.query('INSERT INTO filler (body) VALUES (?)')
  const load = () =>
    db.write(() => {
      for (let i = 0; i < 10; i++) insert.run(crypto.getRandomValues(new Uint8Array(2000)))
    })
  return { db, load }
}

describe('the WAL checkpointer', () => {
  it('takes the checkpoints off the connection and keeps the WAL bounded under sustained writes', async () => {
    const { db, load } = openLoaded('sustained.db')
    const capFrames = 256
    const checkpointer = startCheckpointer(db, { name: 'test', everyMs: 5, capFrames })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    // Commits no longer checkpoint by themselves: the thread does it.
    expect(threshold(db)).toBe(0)
    let written = 0
    let peak = 0
    for (let round = 0; round < 600; round++) {
      for (let t = 0; t < 2; t++) load()
      written += 2 * 10 * 2000
      peak = Math.max(peak, walSize(db))
      // Paced like a dispatcher's turns: the thread gets the write lock between them.
      await Bun.sleep(1)
    }
    // Left alone the WAL would hold every page written (no commit checkpoints any more), 35 MB
    // here, and PASSIVE checkpoints alone let it reach 19 MB; with the cap it peaks near 3 MB.
    expect(written).toBeGreaterThan(20 * 2 ** 20)
    expect(peak).toBeLessThan(written / 2)
    // Once the writes stop, the WAL is checkpointed and its file emptied.
    await eventually(() => walSize(db) === 0, 5000, 'an empty WAL file')
    expect(checkpointer.ended).toBe(false)
    await checkpointer.stop()
    db.close()
  })

  it('ends its thread on stop after a last checkpoint, and gives the connection its threshold back', async () => {
    const { db, load } = openLoaded('stop.db')
    const before = threshold(db)
    // Never idle, never past its cap: only the last checkpoint on stop copies anything.
    const checkpointer = startCheckpointer(db, { name: 'test', everyMs: 5, idleMs: 60_000 })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    expect(threshold(db)).toBe(0)
    for (let i = 0; i < 20; i++) load()
    expect(walFrames(db).checkpointed).toBe(0)
    // Resolves on the thread's close event only: a thread still running never resolves it.
    await checkpointer.stop()
    expect(checkpointer.running).toBe(false)
    expect(checkpointer.ended).toBe(true)
    expect(threshold(db)).toBe(before)
    const { log, checkpointed } = walFrames(db)
    expect(log).toBeGreaterThan(0)
    expect(checkpointed).toBe(log)
    db.close()
  })

  it('hands the checkpoints over to a writer that never lets the event loop turn', async () => {
    const { db, load } = openLoaded('sync.db')
    const checkpointer = startCheckpointer(db, { name: 'test', everyMs: 1, capFrames: 64 })
    // A synchronous load: the thread's ready message is never read, its shared state is.
    const until = performance.now() + 5000
    while (!checkpointer.running && performance.now() < until) {
      checkpointer.handOver()
      load()
    }
    expect(checkpointer.running).toBe(true)
    expect(threshold(db)).toBe(0)
    for (let i = 0; i < 400; i++) load()
    // 400 transactions of 5 pages or more: left alone the WAL holds 2,000 frames or more, none
    // copied. The thread copies them while the loop stays busy; once it has copied them all, the
    // next write starts the WAL over and 0 frames show as copied, so a shorter WAL counts too. A
    // thread the scheduler let wait through the loads gets until the deadline, the loop still
    // blocked.
    const copied = () => {
      const { log, checkpointed } = walFrames(db)
      return checkpointed > 0 || log < 400 * 5
    }
    const deadline = performance.now() + 5000
    while (!copied() && performance.now() < deadline) Bun.sleepSync(1)
    // The frames show in a failure.
    expect({ ...walFrames(db), copied: copied() }).toMatchObject({ copied: true })
    await checkpointer.stop()
    db.close()
  })

  it('ends by itself once the WAL is idle and emptied, and the next handOver gives the threshold back', async () => {
    const { db, load } = openLoaded('idle.db')
    const checkpointer = startCheckpointer(db, {
      name: 'test',
      everyMs: 5,
      idleMs: 50,
      endWhenIdle: true,
    })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    for (let i = 0; i < 20; i++) load()
    await eventually(() => checkpointer.ended, 5000, 'the thread ending when idle')
    expect(walSize(db)).toBe(0)
    checkpointer.handOver()
    expect(threshold(db)).toBe(1000)
    await checkpointer.stop()
    db.close()
  })

  it('hands the checkpoints of a released and reopened handle over too', async () => {
    const { db } = openLoaded('reopen.db')
    const checkpointer = startCheckpointer(db, { name: 'test', everyMs: 5, idleMs: 60_000 })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    expect(db.release()).toBe(true)
    // A new connection: SQLite's own threshold until the next handOver.
    expect(threshold(db)).toBe(1000)
    checkpointer.handOver()
    expect(threshold(db)).toBe(0)
    await checkpointer.stop()
    expect(threshold(db)).toBe(1000)
    db.close()
  })

  it('keeps the checkpoints off while another thread still holds them, and gives them back after both', async () => {
    const { db } = openLoaded('two.db')
    const first = startCheckpointer(db, { name: 'first', everyMs: 5, idleMs: 60_000 })
    await eventually(() => first.running, 5000, 'the first thread')
    const second = startCheckpointer(db, { name: 'second', everyMs: 5, idleMs: 60_000 })
    await eventually(() => second.running, 5000, 'the second thread')
    await first.stop()
    expect(threshold(db)).toBe(0)
    await second.stop()
    expect(threshold(db)).toBe(1000)
    db.close()
  })

  it('starts nothing for a database in memory', async () => {
    const db = openDatabase(':memory:', { migrations: [] })
    const checkpointer = startCheckpointer(db, { name: 'test' })
    checkpointer.handOver()
    expect(checkpointer.running).toBe(false)
    expect(threshold(db)).toBe(1000)
    await checkpointer.stop()
  })
})

describe('a checkpoint that keeps failing', () => {
  it('is logged once, then once a minute with how many attempts failed meanwhile', () => {
    const warnings: Array<Record<string, unknown>> = []
    const log = {
      warn: (_: string, fields: Record<string, unknown>) => warnings.push(fields),
      debug: () => {},
    }
    let now = 1_000_000
    const failures = failureLog('test', log, () => now)
    // The thread tries every 20 ms: three seconds of a held lock.
    for (let i = 0; i < 150; i++) {
      failures.failed('database is locked')
      now += 20
    }
    expect(warnings).toEqual([{ error: 'database is locked', failures: 1 }])
    now += 60_000
    failures.failed('database is locked')
    expect(warnings.at(-1)).toEqual({ error: 'database is locked', failures: 150 })
  })
})
