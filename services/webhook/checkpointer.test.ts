import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { type Db, openDatabase } from '../kernel/db.ts'
import { createLogger, type Logger } from '../kernel/log.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { failureLog, startCheckpointer } from './checkpointer.ts'
import service from './index.ts'

const log = createLogger('webhook-test')
log.level = -999

const threshold = (db: Db) =>
  db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!
    .wal_autocheckpoint

const walSize = (db: Db) => {
  const file = `${db.path}-wal`
  return existsSync(file) ? statSync(file).size : 0
}

/** A table of 2 KB rows: each transaction below adds about 5 pages to the WAL. */
function openLoaded(path: string): { db: Db; load: () => void } {
  const db = openDatabase(path, { migrations: [] })
  db.sqlite.run('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)')
  const insert = db.sqlite.query('INSERT INTO filler (body) VALUES (?)')
  const load = () =>
    db.write(() => {
      for (let i = 0; i < 10; i++) insert.run(crypto.getRandomValues(new Uint8Array(2000)))
    })
  return { db, load }
}

describe('the WAL checkpointer', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('takes the checkpoints off the connection and keeps the WAL bounded under sustained writes', async () => {
    const { db, load } = openLoaded(join(kit.dataDir, 'sustained.db'))
    const capFrames = 256
    const checkpointer = startCheckpointer(db, log, { everyMs: 5, capFrames })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    // Commits no longer checkpoint by themselves: the thread does it.
    expect(threshold(db)).toBe(0)
    let written = 0
    let peak = 0
    for (let round = 0; round < 600; round++) {
      for (let t = 0; t < 2; t++) load()
      written += 2 * 10 * 2000
      peak = Math.max(peak, walSize(db))
      // Paced like the dispatcher's turns: the thread gets the write lock between them.
      await Bun.sleep(1)
    }
    // Left alone the WAL would hold every page written (no commit checkpoints any more), 35 MB
    // here, and PASSIVE checkpoints alone let it reach 19 MB; with the cap it peaks near 3 MB.
    expect(written).toBeGreaterThan(20 * 2 ** 20)
    expect(peak).toBeLessThan(written / 2)
    // Once the writes stop, the WAL is checkpointed and its file emptied.
    await eventually(() => walSize(db) === 0, 5000, 'an empty WAL file')
    await checkpointer.stop()
    db.close()
  })

  it('ends its thread on stop and gives the connection its threshold back', async () => {
    const { db } = openLoaded(join(kit.dataDir, 'stop.db'))
    const before = threshold(db)
    const checkpointer = startCheckpointer(db, log, { everyMs: 5 })
    await eventually(() => checkpointer.running, 5000, 'the checkpoint thread')
    expect(threshold(db)).toBe(0)
    // Resolves on the thread's close event only: a thread still running never resolves it.
    await checkpointer.stop()
    expect(checkpointer.running).toBe(false)
    expect(threshold(db)).toBe(before)
    db.close()
  })

  it('is started and stopped with the service', async () => {
    const svcKit = await createTestKit('webhook', {
      migrations,
      settings: {
        allowInsecure: true,
        allowHosts: [],
        retrySchedule: [0],
        timeoutMs: 1000,
        rateLimit: 100,
        maxInFlight: 4,
        secretKey: Buffer.alloc(32, 3).toString('base64'),
      },
    })
    svcKit.ctx.log.level = -999
    const db = svcKit.ctx.registry.platform('webhook')
    const svc = await service.create(svcKit.ctx)
    await svc.start?.()
    await eventually(() => threshold(db) === 0, 5000, 'the queue handing its checkpoints over')
    await svc.stop?.()
    expect(threshold(db)).toBeGreaterThan(0)
    svcKit.cleanup()
  })
})

describe('a checkpoint that keeps failing', () => {
  it('is logged once, then once a minute with how many attempts failed meanwhile', () => {
    const warnings: Array<Record<string, unknown>> = []
    const log = { warn: (_: string, fields: Record<string, unknown>) => warnings.push(fields) }
    let now = 1_000_000
    const failures = failureLog(log as unknown as Logger, () => now)
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
