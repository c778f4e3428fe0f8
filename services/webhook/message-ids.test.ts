import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { topics } from '../../schema/events.ts'
import { migrations } from '../../schema/webhook/migrations.ts'
import { createClock } from '../kernel/clock.ts'
import { openDatabase } from '../kernel/db.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { consumeEvent } from './consumers.ts'
import type { WebhookDeps } from './deps.ts'
import { enqueueEvent } from './queue.ts'

/**
 * A restored platform (or a replayed outbox) may queue a fact again; it must carry the same
 * `webhook-id`, so a receiver deduplicating by it credits a payment once.
 */
describe('webhook message ids', () => {
  let kit: TestKit
  let deps: WebhookDeps
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
    const db = openDatabase(join(kit.dataDir, 'ids.db'), { migrations })
    deps = { db, clock: createClock(), config: { retrySchedule: [0] } } as unknown as WebhookDeps
    db.sqlite
      .query(
        `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
         VALUES ('whe_a', 'acme', 'https://example.com/', ?, 'x', 'enabled', 'x', 'x')`,
      )
      .run('["payment.success","payment.failed","statement.processed"]')
  })
  afterAll(() => kit.cleanup())

  const messageIds = () =>
    deps.db.sqlite
      .query<{ m: string; body: string }, []>(
        'SELECT message_id AS m, payload AS body FROM webhook_deliveries ORDER BY rowid',
      )
      .all()

  const success = (eventId: string, transactionId: string) =>
    ({
      id: eventId,
      type: topics.transactionsSuccess,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-01-05T10:00:00.000Z',
      data: {
        transaction_id: transactionId,
        amount: 100,
        direction: 'in',
        occurred_at: '2026-01-05T10:00:00.000Z',
        checkout_request_id: 'ws_CO_050120261000001',
        receipt_number: 'TAB1CD2EF3',
        channel: 'stk',
      },
    }) as never

  it('gives the same payment the same message id when it is notified again under a new event id', () => {
    consumeEvent(deps, topics.transactionsSuccess, success('evt_first', 'txn_a'))
    consumeEvent(deps, topics.transactionsSuccess, success('evt_after_restore', 'txn_a'))
    const rows = messageIds().slice(-2)
    expect(rows).toHaveLength(2)
    expect(rows[0]!.m).toBe(rows[1]!.m)
    expect(rows[0]!.m).toMatch(/^msg_[0-9a-f]{32}$/)
    // The body's id is the header's id.
    expect(JSON.parse(rows[0]!.body).id).toBe(rows[0]!.m)
  })

  it('gives another payment, or another tenant, another message id', () => {
    const other = success('evt_other', 'txn_b') as { data: Record<string, unknown> }
    other.data.checkout_request_id = 'ws_CO_050120261000002'
    const before = messageIds().length
    consumeEvent(deps, topics.transactionsSuccess, other as never)
    const rows = messageIds()
    expect(rows).toHaveLength(before + 1)
    // Whatever the tests before it delivered, the new delivery's id is none of theirs.
    const added = rows.at(-1)!.m
    expect(rows.slice(0, -1).map((r) => r.m)).not.toContain(added)
  })

  it('names an event with no fact of its own by the event that brought it', () => {
    const statement = (id: string) =>
      ({
        id,
        type: topics.statementsProcessed,
        version: 1,
        tenant_id: 'acme',
        occurred_at: '2026-01-05T10:00:00.000Z',
        data: { import_id: 'imp_1', accepted: 3 },
      }) as never
    const before = messageIds().length
    consumeEvent(deps, topics.statementsProcessed, statement('evt_s1'))
    consumeEvent(deps, topics.statementsProcessed, statement('evt_s2'))
    const rows = messageIds().slice(before)
    expect(rows).toHaveLength(2)
    expect(rows[0]!.m).not.toBe(rows[1]!.m)
  })

  it('gives each test event a fresh id', () => {
    const a = deps.db.write(() =>
      enqueueEvent(deps, { tenantId: 'acme', event: 'payment.success', data: {}, test: true }),
    )
    const b = deps.db.write(() =>
      enqueueEvent(deps, { tenantId: 'acme', event: 'payment.success', data: {}, test: true }),
    )
    expect(a.messageId).not.toBe(b.messageId)
  })
})
