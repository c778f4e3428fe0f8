import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { topics } from '../../schema/events.ts'
import { migrations } from '../../schema/webhook/migrations.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeSources } from './consumers.ts'
import { enqueueEvents } from './queue.ts'
import { testDispatcherDeps } from './test-kit.ts'

describe('a deleted tenant', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it("loses its endpoints and its pending deliveries end dead; another tenant's stay", async () => {
    const db = openDatabase(join(kit.dataDir, 'removal.db'), { migrations })
    const changed: string[] = []
    const deps = {
      ...testDispatcherDeps(db, { maxInFlight: 4, retrySchedule: [0] }),
      notify: { enqueued() {}, endpointChanged: (id: string) => changed.push(id) },
    }
    const endpoint = db.sqlite.query(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
       VALUES (?, ?, 'https://example.com/', '["payment.success"]', 'x', 'enabled', 'x', 'x')`,
    )
    endpoint.run('whe_gone1', 'gone')
    endpoint.run('whe_gone2', 'gone')
    endpoint.run('whe_kept', 'kept')
    for (const tenant of ['gone', 'kept'])
      db.write(() =>
        enqueueEvents(deps, { tenantId: tenant, events: [{ event: 'payment.success', data: {} }] }),
      )
    await subscribeSources(kit.bus, deps)

    await kit.bus.publish(topics.tenantsChanged, {
      id: 'evt-gone-deleted',
      type: topics.tenantsChanged,
      version: 1,
      tenant_id: 'gone',
      occurred_at: new Date().toISOString(),
      data: {
        change: 'deleted',
        name: 'gone',
        plan: 'free',
        isolation: 'shared',
        status: 'deleted',
        features: {},
        timezone: 'Africa/Nairobi',
      },
    })

    expect(changed.sort()).toEqual(['whe_gone1', 'whe_gone2'])
    const endpoints = db.sqlite.query<{ id: string }, []>('SELECT id FROM webhook_endpoints').all()
    expect(endpoints.map((e) => e.id)).toEqual(['whe_kept'])
    const deliveries = db.sqlite
      .query<{ tenant_id: string; status: string; last_error: string | null }, []>(
        'SELECT tenant_id, status, last_error FROM webhook_deliveries ORDER BY tenant_id',
      )
      .all()
    expect(deliveries).toEqual([
      { tenant_id: 'gone', status: 'dead', last_error: 'tenant deleted' },
      { tenant_id: 'gone', status: 'dead', last_error: 'tenant deleted' },
      { tenant_id: 'kept', status: 'pending', last_error: null },
    ])
  })
})
