import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { createDispatcher } from './dispatcher.ts'
import { OK_OUTCOME, testDispatcherDeps } from './test-kit.ts'

describe('a queue file of an earlier version', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('migrates, and its deliveries left in flight by a crash are sent once', async () => {
    const file = join(kit.dataDir, 'old.db')
    // As written by the version that marked claims in the row (migrations up to 0002).
    const old = openDatabase(file, { migrations: migrations.slice(0, 3) })
    old.sqlite.run(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
       VALUES ('whe_0', 't', 'http://127.0.0.1:1/hook', '["payment.success"]', 'x', 'enabled', 'x', 'x')`,
    )
    const delivery = old.sqlite.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload, status,
         attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, 't', 'whe_0', ?, 'payment.success', '{}', ?, 0, 0, 'x', 'x')`,
    )
    delivery.run('del_a', 'msg_a', 'delivering')
    delivery.run('del_b', 'msg_b', 'pending')
    delivery.run('del_c', 'msg_c', 'delivered')
    old.close()

    const db = openDatabase(file, { migrations })
    const indexes = db.sqlite
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_deliveries' AND sql IS NOT NULL ORDER BY name",
      )
      .all()
      .map((r) => r.name)
    expect(indexes).toEqual(['webhook_deliveries_endpoint', 'webhook_deliveries_tenant'])
    const deps = testDispatcherDeps(db, { maxInFlight: 4, retrySchedule: [0] })
    const sent: string[] = []
    const dispatcher = createDispatcher(deps, {
      send: async (_endpoint, d) => {
        sent.push(d.messageId)
        return OK_OUTCOME
      },
    })
    dispatcher.start()
    const statuses = () =>
      db.sqlite
        .query<{ id: string; status: string }, []>(
          'SELECT id, status FROM webhook_deliveries ORDER BY id',
        )
        .all()
    await eventually(() => statuses().every((r) => r.status === 'delivered'))
    await dispatcher.stop()
    expect(sent.sort()).toEqual(['msg_a', 'msg_b'])
    db.close()
  })
})
