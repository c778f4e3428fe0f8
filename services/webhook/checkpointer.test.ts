import { describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/webhook/migrations.ts'
import type { Db } from '../kernel/db.ts'
import { createTestKit, eventually } from '../kernel/testing.ts'
import service from './index.ts'

const threshold = (db: Db) =>
  db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!
    .wal_autocheckpoint

// The checkpointer itself is tested in services/kernel/checkpointer.test.ts.
describe("the webhook queue's WAL checkpointer", () => {
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
