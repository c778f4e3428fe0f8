import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { createClock } from '../kernel/clock.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { replayDead } from './delivery-log.ts'
import type { WebhookDeps } from './deps.ts'
import {
  countQueue,
  pendingEndpoints,
  purgeDelivered,
  QUEUE_WIDE_SQL,
  recoverInFlight,
} from './queue-wide.ts'

describe('the queue-wide questions', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('are answered endpoint by endpoint, without reading the whole table', () => {
    const db = openDatabase(join(kit.dataDir, 'wide.db'), { migrations })
    const notified: string[] = []
    const clock = createClock()
    const deps = {
      db,
      clock,
      notify: { enqueued: (ids: Iterable<string>) => notified.push(...ids) },
    } as unknown as WebhookDeps
    const endpoint = db.sqlite.query(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
       VALUES (?, ?, 'https://example.com/', '[]', 'x', ?, 'x', 'x')`,
    )
    endpoint.run('whe_a', 't', 'enabled')
    endpoint.run('whe_b', 't', 'disabled')
    endpoint.run('whe_c', 'u', 'enabled')
    const delivery = db.sqlite.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload,
         status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'payment.success', '{}', ?, 1, ?, 'x', 'x')`,
    )
    const old = clock.nowMs() - 40 * 86_400_000
    const rows: Array<[string, string, string, number]> = [
      // [tenant, endpoint, status, next_attempt_at]
      ['t', 'whe_a', 'delivered', old],
      ['t', 'whe_a', 'delivered', clock.nowMs()],
      ['t', 'whe_a', 'dead', old],
      ['t', 'whe_a', 'delivering', 5],
      ['t', 'whe_b', 'dead', old],
      ['t', 'whe_b', 'delivered', old],
      ['t', 'whe_gone', 'delivering', 5],
      ['u', 'whe_c', 'dead', old],
      ['u', 'whe_c', 'delivered', old],
      ['u', 'whe_x', 'pending', old],
    ]
    db.write(() => {
      for (const [i, [tenant, ep, status, at]] of rows.entries())
        delivery.run(`del_${i}`, tenant, ep, `msg_${i}`, status, at)
    })
    const status = (i: number) =>
      db.sqlite
        .query<{ status: string }, [string]>('SELECT status FROM webhook_deliveries WHERE id = ?')
        .get(`del_${i}`)?.status
    // Every one of these reaches the rows through the endpoint index, never by a scan.
    for (const [name, sql] of Object.entries(QUEUE_WIDE_SQL)) {
      // A statement of its own, finalized: an EXPLAIN left open would hold the next commit up.
      const explain = db.sqlite.prepare<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`)
      const scans = explain
        .all()
        .map((r) => r.detail)
        .filter((d) => /^SCAN (webhook_deliveries|d)\b/.test(d))
      explain.finalize()
      expect({ name, scans }).toEqual({ name, scans: [] })
    }
    expect(pendingEndpoints(deps).sort()).toEqual(['whe_x'])
    expect(countQueue(deps)).toEqual({ pending: 1, dead: 3 })

    // Deliveries in flight when a process died go back to pending, whatever their endpoint.
    expect(recoverInFlight(deps)).toBe(2)
    expect([status(3), status(6)]).toEqual(['pending', 'pending'])
    // Delivered ones past the retention go, of every endpoint; recent and dead ones stay.
    expect(purgeDelivered(deps)).toBe(3)
    expect(rows.map((_, i) => status(i) ?? null)).toEqual([
      null,
      'delivered',
      'dead',
      'pending',
      'dead',
      null,
      'pending',
      'dead',
      null,
      'pending',
    ])
    // A tenant's dead deliveries of its enabled endpoints only; another tenant's stay dead.
    expect(replayDead(deps, 't')).toEqual({ replayed: 1 })
    expect([status(2), status(4), status(7)]).toEqual(['pending', 'dead', 'dead'])
    expect(notified).toEqual(['whe_a'])
    expect(replayDead(deps, null, 'whe_c')).toEqual({ replayed: 1 })
    expect(status(7)).toBe('pending')
    db.close()
  })
})
