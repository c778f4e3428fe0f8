import { afterAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import type { TransactionEvent } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { applyTransactions } from './ingest.ts'
import { counterpartyKey, toStored } from './stored.ts'

/** Every rollup recomputed from the transactions table: what the incremental path must equal. */
function recomputed(kit: TestKit, tenantId: string) {
  const db = kit.registry.tenant('analytics', tenantId)
  const q = (sql: string) => db.sqlite.query(sql).all(tenantId)
  return {
    days: q(`SELECT day, user_id, kind, in_count, in_cents, out_count, out_cents FROM daily_summaries
             WHERE tenant_id = ? ORDER BY day, user_id, kind`),
    daysRef: q(`SELECT local_day AS day, coalesce(user_id, '') AS user_id, kind,
        sum(direction = 'in') AS in_count, sum(CASE WHEN direction = 'in' THEN amount_cents ELSE 0 END) AS in_cents,
        sum(direction = 'out') AS out_count, sum(CASE WHEN direction = 'out' THEN amount_cents ELSE 0 END) AS out_cents
      FROM transactions WHERE tenant_id = ? GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    cells:
      q(`SELECT day, user_id, direction, category, kind, tx_count, amount_cents FROM daily_totals
              WHERE tenant_id = ? ORDER BY 1, 2, 3, 4, 5`),
    cellsRef: q(`SELECT local_day AS day, coalesce(user_id, '') AS user_id, direction,
        coalesce(category, 'Uncategorized') AS category, kind, count(*) AS tx_count,
        sum(amount_cents) AS amount_cents
      FROM transactions WHERE tenant_id = ? GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`),
    parties: q(`SELECT day, counterparty_key, direction, tx_count, amount_cents, last_seen
                FROM daily_counterparties WHERE tenant_id = ? ORDER BY 1, 2, 3`),
    // Only customers and suppliers are counterparties (a lender or an agent never is).
    partiesRef: q(`SELECT local_day AS day, counterparty_key, direction, count(*) AS tx_count,
        sum(amount_cents) AS amount_cents, max(occurred_at) AS last_seen
      FROM transactions WHERE tenant_id = ? AND counterparty_key IS NOT NULL
        AND kind IN ('customer_payment', 'supplier_payment') GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    totals: q(`SELECT key, tx_count, total_cents, in_cents, out_cents, first_seen, last_seen
               FROM counterparties WHERE tenant_id = ? ORDER BY key`),
    totalsRef:
      q(`SELECT counterparty_key AS key, count(*) AS tx_count, sum(amount_cents) AS total_cents,
        sum(CASE WHEN direction = 'in' THEN amount_cents ELSE 0 END) AS in_cents,
        sum(CASE WHEN direction = 'out' THEN amount_cents ELSE 0 END) AS out_cents,
        min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
      FROM transactions WHERE tenant_id = ? AND counterparty_key IS NOT NULL
        AND kind IN ('customer_payment', 'supplier_payment') GROUP BY 1 ORDER BY 1`),
  }
}

/** Kinds a row may have: no kind (a payment's by direction), trading ones and others. */
const KIND_POOL = [undefined, 'customer_payment', 'charge', 'loan_drawn', 'savings_out'] as const

describe('the insert path', () => {
  let kit: TestKit
  afterAll(() => kit.cleanup())

  it('keeps every rollup equal to a recomputation through inserts and arbitrary updates', async () => {
    kit = await createTestKit('analytics', { migrations })
    const db = kit.registry.tenant('analytics', 'acme')
    const zone = timeZone('Africa/Nairobi')
    let seed = 3
    const rnd = (n: number) => {
      seed = (seed * 16_807) % 2_147_483_647
      return seed % n
    }
    const make = (id: number): TransactionEvent => ({
      transaction_id: `t${id}`,
      occurred_at: new Date(
        Date.parse('2026-05-01T00:00:00Z') + rnd(10 * 86_400) * 1000,
      ).toISOString(),
      amount: rnd(100_000) / 100,
      direction: rnd(2) ? 'in' : 'out',
      counterparty_name: rnd(5) ? `Party ${rnd(6)}` : null,
      counterparty_phone: rnd(2) ? `07000000${rnd(6)}0` : null,
      description: 'x',
      source: 'api',
      user_id: rnd(3) ? `usr_${rnd(2)}` : null,
      category: rnd(4) ? ['Revenue', 'Rent', 'Other'][rnd(3)] : undefined,
      ...kindOf(rnd(KIND_POOL.length)),
    })
    const kindOf = (i: number) => (KIND_POOL[i] ? { kind: KIND_POOL[i] } : {})
    for (let round = 0; round < 30; round++) {
      const batch = Array.from({ length: 20 }, () => make(rnd(120)))
      const rows = batch.map((t) => toStored('acme', zone, t))
      db.write(() =>
        applyTransactions(db, rows, new Date().toISOString(), { onlyNew: round % 5 === 4 }),
      )
    }
    const stored = db.sqlite
      .query('SELECT * FROM transactions WHERE tenant_id = ? ORDER BY id')
      .all('acme') as Array<Record<string, any>>
    const overrides = stored.map((t, i) =>
      toStored('acme', zone, {
        transaction_id: t.id,
        occurred_at: t.occurred_at,
        amount: t.amount_cents / 100,
        direction: t.direction,
        counterparty_name: t.counterparty_name,
        counterparty_phone: t.counterparty_phone,
        description: t.description,
        source: t.source,
        user_id: t.user_id,
        category: i % 3 === 0 ? undefined : ['Transport', 'Rent'][i % 2],
        category_source: 'override',
        // Some rows change kind too (a statement's kind arriving after a payment's default).
        kind: i % 4 === 0 ? KIND_POOL[1 + ((i / 4) % 4)] : t.kind,
      }),
    )
    const result = db.write(() => applyTransactions(db, overrides, new Date().toISOString()))
    expect(result.updated).toBeGreaterThan(stored.length / 2)
    const r = recomputed(kit, 'acme')
    expect(r.days).toEqual(r.daysRef)
    expect(r.cells).toEqual(r.cellsRef)
    expect(r.parties).toEqual(r.partiesRef)
    expect(r.totals).toEqual(r.totalsRef)
    expect(r.days.length).toBeGreaterThan(5)
  })

  it('stores a long batch, some of its ids known, as it would one row at a time', async () => {
    const own = await createTestKit('analytics', { migrations })
    const zone = timeZone('Africa/Nairobi')
    const make = (i: number, category: string): TransactionEvent => ({
      transaction_id: `t${i}`,
      occurred_at: new Date(Date.parse('2026-05-01T00:00:00Z') + i * 600_000).toISOString(),
      amount: 10 + i,
      direction: i % 3 ? 'in' : 'out',
      counterparty_name: i % 4 ? `Party ${i % 7}` : null,
      counterparty_phone: null,
      description: 'x',
      receipt_number: i % 5 ? `R${i}` : null,
      source: 'statement',
      user_id: null,
      category,
    })
    const dump = (tenantId: string) => {
      const db = own.registry.tenant('analytics', tenantId)
      const all = (table: string) =>
        db.sqlite
          .query(`SELECT * FROM ${table} WHERE tenant_id = ? ORDER BY 2, 3, 4, 5`)
          .all(tenantId)
          .map((r) => ({ ...(r as object), tenant_id: null, updated_at: null }))
      return ['transactions', 'receipt_reports', 'daily_totals', 'daily_summaries']
        .concat(['daily_counterparties', 'counterparties'])
        .map(all)
    }
    const known = Array.from({ length: 40 }, (_, i) => make(i * 3, 'Rent'))
    const batch = Array.from({ length: 130 }, (_, i) => make(i, i % 2 ? 'Revenue' : 'Other'))
    const results = []
    for (const [tenantId, size] of [
      ['many', batch.length],
      ['one', 1],
    ] as const) {
      const db = own.registry.tenant('analytics', tenantId)
      const rows = known.map((t) => toStored(tenantId, zone, t))
      db.write(() => applyTransactions(db, rows, 'then'))
      const total = { inserted: 0, updated: 0, unchanged: 0 }
      for (let at = 0; at < batch.length; at += size) {
        const part = batch.slice(at, at + size).map((t) => toStored(tenantId, zone, t))
        const r = db.write(() => applyTransactions(db, part, 'now'))
        total.inserted += r.inserted
        total.updated += r.updated
        total.unchanged += r.unchanged
      }
      results.push(total)
    }
    expect(results[0]).toEqual(results[1]!)
    expect(results[0]).toMatchObject({ inserted: 90 })
    expect(dump('many')).toEqual(dump('one'))
    own.cleanup()
  })

  it('groups counterparties by phone digits, else by folded name', () => {
    expect(counterpartyKey('Ann', '0712 345 678')).toBe('tel:254712345678')
    expect(counterpartyKey('Ann', '+254712345678')).toBe('tel:254712345678')
    expect(counterpartyKey('  Ann   Mwangi ', null)).toBe('name:ann mwangi')
    expect(counterpartyKey(null, null)).toBeNull()
  })
})
