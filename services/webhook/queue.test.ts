import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { createClock } from '../kernel/clock.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { claimDue } from './claims.ts'
import type { WebhookDeps } from './deps.ts'
import { enqueueEvents, recordAttempts } from './queue.ts'
import { OK_OUTCOME } from './test-kit.ts'

describe('the delivery queue', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('queues a batch of events for the subscribed endpoints and claims them in queue order', () => {
    const db = openDatabase(join(kit.dataDir, 'batch.db'), { migrations })
    const deps = {
      db,
      clock: createClock(),
      config: { retrySchedule: [0] },
    } as unknown as WebhookDeps
    const endpoint = db.sqlite.query(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
       VALUES (?, ?, 'https://example.com/', ?, 'x', ?, 'x', 'x')`,
    )
    endpoint.run('whe_a', 't', '["transaction.categorized"]', 'enabled')
    endpoint.run('whe_b', 't', '["transaction.categorized","payment.success"]', 'enabled')
    endpoint.run('whe_off', 't', '["transaction.categorized"]', 'disabled')
    endpoint.run('whe_other', 'u', '["transaction.categorized"]', 'enabled')
    const events = Array.from({ length: 300 }, (_, i) => ({
      event: 'transaction.categorized' as const,
      data: { n: i },
    }))
    const queued = db.write(() =>
      enqueueEvents(deps, {
        tenantId: 't',
        events: [...events, { event: 'payment.success', data: { n: 300 } }],
      }),
    )
    expect(queued.endpoints.sort()).toEqual(['whe_a', 'whe_b'])
    expect(queued.messages.map((m) => m.deliveries.length)).toEqual([...events.map(() => 2), 1])
    // Rows queued in the same millisecond come out in the order they were queued.
    const claimed = claimDue(deps, { endpointId: 'whe_a', nowMs: Date.now() + 1000, limit: 500 })
    expect(claimed.map((d) => JSON.parse(d.payload).data.n)).toEqual(events.map((_, i) => i))
    expect(new Set(claimed.map((d) => d.messageId)).size).toBe(300)
    db.close()
  })

  it('records an outcome on its own row even when the rowid it was claimed at names another', () => {
    const db = openDatabase(join(kit.dataDir, 'rowid.db'), { migrations })
    const deps = {
      db,
      clock: createClock(),
      config: { retrySchedule: [0] },
    } as unknown as WebhookDeps
    const insert = db.sqlite.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload,
         status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, 't', 'ep_1', ?, 'payment.success', '{}', 'pending', 0, 0, 'x', 'x')`,
    )
    db.write(() => {
      insert.run('del_a', 'msg_a')
      insert.run('del_b', 'msg_b')
    })
    const [a, b] = claimDue(deps, { endpointId: 'ep_1', nowMs: 1_000, limit: 2 })
    // As after a restore from a copy that numbered the rows anew: a's rowid is now b's.
    recordAttempts(deps, [{ delivery: { ...a!, seq: b!.seq }, outcome: OK_OUTCOME }])
    const status = db.sqlite.query<{ id: string; status: string }, []>(
      'SELECT id, status FROM webhook_deliveries ORDER BY id',
    )
    expect(status.all()).toEqual([
      { id: 'del_a', status: 'delivered' },
      { id: 'del_b', status: 'pending' },
    ])
    db.close()
  })
})
