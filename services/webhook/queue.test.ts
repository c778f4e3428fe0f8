import { afterAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { createClock } from '../kernel/clock.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import type { WebhookDeps } from './deps.ts'
import { claimDue, markDelivered } from './queue.ts'

describe('the delivery queue', () => {
  let kit: TestKit
  afterAll(() => kit.cleanup())

  it('never hands one delivery to two claimers sharing the file', async () => {
    kit = await createTestKit('webhook', { migrations })
    const file = join(kit.dataDir, 'queue.db')
    const clock = createClock()
    const a = { db: openDatabase(file, { migrations }), clock } as unknown as WebhookDeps
    const b = { db: openDatabase(file, { migrations }), clock } as unknown as WebhookDeps
    const insert = a.db.sqlite.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload,
         status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, 't', 'ep_1', ?, 'payment.success', '{}', 'pending', 0, ?, 'x', 'x')`,
    )
    a.db.write(() => {
      for (let i = 0; i < 500; i++) insert.run(`del_${String(i).padStart(4, '0')}`, `msg_${i}`, i)
    })
    const seen: string[][] = [[], []]
    for (let round = 0; round < 40; round++) {
      for (const [k, deps] of [a, b].entries()) {
        const claimed = claimDue(deps, 'ep_1', 1_000, 1 + (round % 17))
        seen[k]!.push(...claimed.map((d) => d.id))
        // Each claimer gets its due deliveries oldest first.
        expect(claimed.map((d) => d.id)).toEqual(claimed.map((d) => d.id).sort())
      }
    }
    const all = [...seen[0]!, ...seen[1]!]
    expect(new Set(all).size).toBe(all.length)
    expect(all.length).toBe(500)
    expect(seen[0]!.length).toBeGreaterThan(0)
    expect(seen[1]!.length).toBeGreaterThan(0)
    expect(claimDue(b, 'ep_1', 1_000, 10)).toEqual([])
    markDelivered(a, [{ id: 'del_0001', statusCode: 204, at: '2026-01-01T00:00:00.000Z' }])
    expect(
      a.db.sqlite
        .query("SELECT status, last_status_code FROM webhook_deliveries WHERE id = 'del_0001'")
        .get(),
    ).toEqual({ status: 'delivered', last_status_code: 204 })
    a.db.close()
    b.db.close()
  })
})
