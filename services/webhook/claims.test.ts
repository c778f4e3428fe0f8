import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { createClock } from '../kernel/clock.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { claimDue, holdsQueue, nextDueAfter, takeQueue } from './claims.ts'
import type { WebhookDeps } from './deps.ts'

describe('claims', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('hand out due deliveries oldest first, leave out those in flight and write nothing', () => {
    const db = openDatabase(join(kit.dataDir, 'claims.db'), { migrations })
    const deps = { db, clock: createClock() } as unknown as WebhookDeps
    const insert = db.sqlite.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload,
         status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, 't', ?, ?, 'payment.success', '{}', 'pending', 0, ?, 'x', 'x')`,
    )
    db.write(() => {
      // Due at 0..39 ms, the later ones first in the table; ten more due at 5 s; another endpoint.
      for (let i = 39; i >= 0; i--)
        insert.run(`del_${String(i).padStart(2, '0')}`, 'ep_1', `m${i}`, i)
      for (let i = 40; i < 50; i++) insert.run(`del_${i}`, 'ep_1', `m${i}`, 5000)
      insert.run('del_other', 'ep_2', 'mo', 0)
    })
    const changes = () => db.sqlite.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n
    const before = changes()
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
    const range = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `del_${String(from + i).padStart(2, '0')}`)

    const first = claimDue(deps, { endpointId: 'ep_1', nowMs: 1000, limit: 10 })
    expect(ids(first)).toEqual(range(0, 10))
    const inFlight = new Set(first.map((r) => r.seq))
    const second = claimDue(deps, { endpointId: 'ep_1', nowMs: 1000, limit: 10, inFlight })
    expect(ids(second)).toEqual(range(10, 20))
    for (const r of second) inFlight.add(r.seq)
    expect(ids(claimDue(deps, { endpointId: 'ep_1', nowMs: 1000, limit: 100, inFlight }))).toEqual(
      range(20, 40),
    )
    // Every due row is claimed or in flight: the next one falls due at 5 s.
    expect(nextDueAfter(deps, 'ep_1', 1000)).toBe(5000)
    expect(nextDueAfter(deps, 'ep_1', 5000)).toBeNull()
    expect(first[0]).toMatchObject({
      id: 'del_00',
      endpointId: 'ep_1',
      messageId: 'm0',
      attempts: 0,
    })
    expect(changes()).toBe(before)
    expect(
      db.sqlite
        .query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status <> 'pending'")
        .get(),
    ).toEqual({ n: 0 })
    db.close()
  })

  it('are taken by the dispatcher started last on a file', () => {
    const file = join(kit.dataDir, 'owner.db')
    const clock = createClock()
    const a = { db: openDatabase(file, { migrations }), clock } as unknown as WebhookDeps
    const b = { db: openDatabase(file, { migrations }), clock } as unknown as WebhookDeps
    const first = takeQueue(a)
    expect(holdsQueue(a, first)).toBe(true)
    const second = takeQueue(b)
    expect(second).not.toBe(first)
    expect(holdsQueue(a, first)).toBe(false)
    expect(holdsQueue(a, second)).toBe(true)
    a.db.close()
    b.db.close()
  })
})
