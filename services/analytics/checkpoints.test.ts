import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import type { Db } from '../kernel/db.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { MAX_THREADS, MIN_ROWS, stopCheckpointers } from './checkpoints.ts'
import { consumeTransactions } from './consumers.ts'

const threshold = (db: Db) =>
  db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()!
    .wal_autocheckpoint

let n = 0
/** One categorized message of `rows` new transactions for `tenantId`; returns `rows`. */
function consume(kit: TestKit, tenantId: string, rows = MIN_ROWS): number {
  const at = n
  n += rows
  consumeTransactions(
    kit.ctx,
    {
      id: `evt_${at}`,
      type: 'mobilemoney.transactions.categorized',
      version: 1,
      tenant_id: tenantId,
      occurred_at: '2026-03-29T12:00:00.000Z',
      data: {
        transactions: Array.from({ length: rows }, (_, i) => ({
          transaction_id: `t${at + i}`,
          occurred_at: '2026-03-28T10:00:00.000Z',
          amount: 10 + i,
          direction: 'in' as const,
          counterparty_name: `Party ${i % 5}`,
          description: 'sale',
          receipt_number: `R${at + i}`,
          source: 'statement' as const,
          category: 'Revenue',
        })),
      },
    },
    { onlyNew: false },
  )
  return rows
}

describe("the consumer's checkpoint threads", () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
  })
  afterAll(() => kit.cleanup())

  it("take the checkpoints off a tenant database's commits while it is loaded, without the event loop turning", async () => {
    const db = kit.registry.tenant('analytics', 'acme')
    expect(threshold(db)).toBe(1000)
    // A synchronous load, as the consumer runs one message after another.
    const until = performance.now() + 5000
    let sent = 0
    while (threshold(db) !== 0 && performance.now() < until) sent += consume(kit, 'acme')
    expect(threshold(db)).toBe(0)
    await stopCheckpointers(kit.ctx)
    expect(threshold(db)).toBe(1000)
    const rows = db.sqlite
      .query<{ n: number }, [string]>('SELECT count(*) AS n FROM transactions WHERE tenant_id = ?')
      .get('acme')
    expect(rows?.n).toBe(sent)
  })

  it(`run for ${MAX_THREADS} databases at most; any other checkpoints in its commits`, async () => {
    const ids = Array.from({ length: MAX_THREADS + 1 }, (_, i) => `own${i}`)
    for (const id of ids) kit.createTenant(id, { isolation: 'database' })
    const dbs = ids.map((id) => kit.registry.tenant('analytics', id))
    await eventually(
      () => {
        for (const id of ids) consume(kit, id)
        return dbs.slice(0, MAX_THREADS).every((db) => threshold(db) === 0)
      },
      5000,
      'the first databases handed over',
    )
    expect(threshold(dbs[MAX_THREADS]!)).toBe(1000)
    await stopCheckpointers(kit.ctx)
    for (const db of dbs) expect(threshold(db)).toBe(1000)
  })

  it('end when their database is idle, and the next message starts one again', async () => {
    const db = kit.registry.tenant('analytics', 'idle')
    const until = performance.now() + 5000
    while (threshold(db) !== 0 && performance.now() < until) consume(kit, 'idle')
    expect(threshold(db)).toBe(0)
    // The thread ends after a second without writes, and gives the threshold back.
    await eventually(() => threshold(db) === 1000, 5000, 'the idle thread ending')
    // A message of a few rows starts none: its commit checkpoints as SQLite would.
    for (let i = 0; i < 20; i++) consume(kit, 'idle', MIN_ROWS - 1)
    expect(threshold(db)).toBe(1000)
    await eventually(
      () => {
        consume(kit, 'idle')
        return threshold(db) === 0
      },
      5000,
      'a new thread',
    )
    await stopCheckpointers(kit.ctx)
  })
})
