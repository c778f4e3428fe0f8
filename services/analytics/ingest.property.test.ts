import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { migrations } from '../../schema/analytics/migrations.ts'
import type { TransactionEvent } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { timeZone } from '../kernel/time-zone.ts'
import { consumeTransactions } from './consumers.ts'
import { counterpartyTotals } from './customers.ts'

const TABLES = [
  'transactions',
  'receipt_reports',
  'daily_totals',
  'daily_summaries',
  'daily_counterparties',
  'counterparties',
]

/**
 * Random broker batches from small pools, so ids, receipts, parties and days collide: an id
 * again (a category override or a raw copy), a receipt another id holds (a second channel, a raw
 * copy the categorizer's id replaces), nameless rows between named ones, times out of order.
 */
const sources = ['statement', 'sms', 'api', 'payment'] as const
const event = fc.record({
  id: fc.integer({ min: 0, max: 11 }),
  minute: fc.integer({ min: 0, max: 3 * 24 * 60 }),
  cents: fc.integer({ min: 0, max: 500_000 }),
  out: fc.boolean(),
  name: fc.option(fc.constantFrom('Ann', 'ann ', 'Bob Shop', 'Carol'), { nil: null }),
  phone: fc.option(fc.constantFrom('0712345678', '+254712345678', '0700000001'), { nil: null }),
  receipt: fc.option(fc.integer({ min: 0, max: 7 }), { nil: null }),
  source: fc.constantFrom(...sources),
  channel: fc.option(fc.constantFrom('stk', 'c2b'), { nil: undefined }),
  otherReport: fc.option(fc.constantFrom(...sources), { nil: undefined }),
  user: fc.option(fc.constantFrom('usr_a', 'usr_b'), { nil: null }),
  category: fc.option(fc.constantFrom('Revenue', 'Rent', 'Transport'), { nil: undefined }),
  balance: fc.option(fc.integer({ min: -10_000, max: 10_000 }), { nil: null }),
  // A receipt's legs (its charge, a Fuliza draw) are entries of their own; kinds pick parties.
  kind: fc.option(fc.constantFrom('customer_payment', 'charge', 'loan_drawn'), { nil: undefined }),
  leg: fc.option(fc.constantFrom('', 'charge', 'loan'), { nil: undefined }),
})
type Drawn = typeof event extends fc.Arbitrary<infer T> ? T : never

function toEvent(d: Drawn): TransactionEvent {
  const occurredAt = new Date(Date.parse('2026-05-01T20:00:00Z') + d.minute * 60_000).toISOString()
  const e: TransactionEvent = {
    transaction_id: `t${d.id}`,
    occurred_at: occurredAt,
    amount: d.cents / 100,
    direction: d.out ? 'out' : 'in',
    counterparty_name: d.name,
    counterparty_phone: d.phone,
    description: `paid ${d.id}`,
    receipt_number: d.receipt === null ? null : `R${d.receipt}`,
    balance: d.balance === null ? null : d.balance / 100,
    source: d.source,
    user_id: d.user,
    ...(d.channel ? { channel: d.channel } : {}),
    ...(d.category ? { category: d.category, category_confidence: 0.75 } : {}),
    ...(d.kind ? { kind: d.kind } : {}),
    ...(d.leg !== undefined ? { leg: d.leg } : {}),
  }
  // The categorizer lists every channel's report of a receipt.
  if (e.receipt_number && d.otherReport)
    e.reports = [
      {
        source: d.source,
        transaction_id: e.transaction_id,
        occurred_at: occurredAt,
        amount: e.amount,
        direction: e.direction,
      },
      {
        source: d.otherReport,
        transaction_id: 'x',
        occurred_at: '2026-05-01T21:00:00+03:00',
        amount: e.amount,
        direction: e.direction,
        balance: null,
        import_id: 'imp_1',
      },
    ]
  return e
}

describe('the consumer insert path', () => {
  let kit: TestKit
  let seq = 0
  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
  })
  afterAll(() => kit.cleanup())

  const consume = (tenantId: string, list: TransactionEvent[], onlyNew: boolean, id?: string) =>
    consumeTransactions(
      kit.ctx,
      {
        id: id ?? `evt_${++seq}`,
        type: onlyNew ? 'mobilemoney.transactions.raw' : 'mobilemoney.transactions.categorized',
        version: 1,
        tenant_id: tenantId,
        occurred_at: '2026-05-04T00:00:00.000Z',
        data: { transactions: list },
      },
      { onlyNew },
    )
  const dump = (tenantId: string) => {
    const db = kit.registry.tenant('analytics', tenantId)
    return TABLES.map((table) =>
      db.sqlite
        .query(`SELECT * FROM ${table} WHERE tenant_id = ? ORDER BY 2, 3, 4, 5`)
        .all(tenantId)
        .map((r) => ({ ...(r as object), tenant_id: null, updated_at: null })),
    )
  }

  it('stores a batch, exactly once, as it stores its rows one message each', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ raw: fc.boolean(), rows: fc.array(event, { minLength: 1, maxLength: 60 }) }),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        fc.nat(),
        (batches, again) => {
          const run = ++seq
          const whole = `whole-${run}`
          const single = `single-${run}`
          const totals = { whole: [0, 0, 0], single: [0, 0, 0] }
          const ids: string[] = []
          for (const b of batches) {
            const list = b.rows.map(toEvent)
            const id = `evt_${++seq}`
            ids.push(id)
            const r = consume(whole, list, b.raw, id)!
            totals.whole = [
              totals.whole[0]! + r.inserted,
              totals.whole[1]! + r.updated,
              totals.whole[2]! + r.unchanged,
            ]
            for (const e of list) {
              const one = consume(single, [e], b.raw)!
              totals.single = [
                totals.single[0]! + one.inserted,
                totals.single[1]! + one.updated,
                totals.single[2]! + one.unchanged,
              ]
            }
          }
          const stored = dump(whole)
          expect(stored).toEqual(dump(single))
          expect(totals.whole).toEqual(totals.single)
          // A message delivered again changes nothing (the inbox).
          const b = batches[again % batches.length]!
          expect(consume(whole, b.rows.map(toEvent), b.raw, ids[again % ids.length])).toBeNull()
          expect(dump(whole)).toEqual(stored)
        },
      ),
      { numRuns: 100 },
    )
  }, 30_000)

  it('answers a counterparty read over any range from its rollups as the transactions in it do', () => {
    const minute = (m: number) => Date.parse('2026-05-01T20:00:00Z') + m * 60_000
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 80 }),
        fc.option(fc.integer({ min: -60, max: 3 * 24 * 60 + 60 }), { nil: null }),
        fc.option(fc.integer({ min: -60, max: 3 * 24 * 60 + 60 }), { nil: null }),
        (rows, from, to) => {
          const tenantId = `range-${++seq}`
          consume(tenantId, rows.map(toEvent), false)
          const db = kit.registry.tenant('analytics', tenantId)
          const zone = timeZone(kit.registry.placement(tenantId).timezone)
          const range = {
            fromMs: from === null ? null : minute(from),
            toMs: to === null ? null : minute(to),
          }
          // Whole days from the daily rollup (both directions), the edges from the transactions.
          const read = counterpartyTotals({ db, tenantId, userId: null, zone, range })
            .map(({ key, count, total, in_cents, out_cents, last_seen }) => ({
              key,
              count,
              total,
              in_cents,
              out_cents,
              last_seen,
            }))
            .sort((a, b) => (a.key < b.key ? -1 : 1))
          const iso = (ms: number | null, open: string) =>
            ms === null ? open : new Date(ms).toISOString()
          const expected = db.sqlite
            .query(
              `SELECT counterparty_key AS key, count(*) AS count, sum(amount_cents) AS total,
                sum(CASE WHEN direction = 'in' THEN amount_cents ELSE 0 END) AS in_cents,
                sum(CASE WHEN direction = 'out' THEN amount_cents ELSE 0 END) AS out_cents,
                max(occurred_at) AS last_seen
              FROM transactions WHERE tenant_id = ? AND counterparty_key IS NOT NULL
                AND kind IN ('customer_payment', 'supplier_payment')
                AND occurred_at >= ? AND occurred_at < ?
              GROUP BY counterparty_key ORDER BY counterparty_key`,
            )
            .all(tenantId, iso(range.fromMs, ''), iso(range.toMs, '9'))
          expect(read).toEqual(expected as typeof read)
        },
      ),
      { numRuns: 100 },
    )
  }, 30_000)
})
