import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import { type EventEnvelope, type TransactionEvent, topics } from '../../schema/events.ts'
import { api } from '../../test/support/client.ts'
import { newId } from '../kernel/ids.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeTransactions } from './consumers.ts'
import { cleanName } from './customers.ts'
import { createAnalyticsApp } from './routes.ts'

let seq = 0
const txn = (over: Partial<TransactionEvent>): TransactionEvent => ({
  transaction_id: `t-${++seq}`,
  occurred_at: '2026-03-01T09:00:00Z',
  amount: 100,
  direction: 'in',
  counterparty_name: null,
  counterparty_phone: null,
  description: 'x',
  receipt_number: `R${seq}`,
  balance: null,
  source: 'statement',
  user_id: 'usr_a',
  category: 'Sales',
  category_confidence: 0.9,
  category_source: 'rule',
  rule_id: null,
  ...over,
})
const envelope = (tenantId: string, transactions: TransactionEvent[]): EventEnvelope => ({
  id: newId('evt'),
  type: topics.transactionsCategorized,
  version: 1,
  tenant_id: tenantId,
  occurred_at: new Date().toISOString(),
  data: { transactions },
})
const day = (d: number) => new Date(Date.UTC(2026, 2, 1 + d, 9)).toISOString()

/** A month of a shop's statement: two customers daily, rent and power every ten days. */
function month(): TransactionEvent[] {
  const batch: TransactionEvent[] = []
  for (let d = 0; d < 30; d++) {
    batch.push(
      txn({
        occurred_at: day(d),
        amount: 1000,
        counterparty_name: '254739***838 FAITH CHEPKOECH',
        counterparty_phone: null,
      }),
      txn({
        occurred_at: day(d),
        amount: 200 + d,
        counterparty_name: 'PETER OTIENO',
        counterparty_phone: '254722111222',
      }),
    )
    if (d % 10 === 0)
      batch.push(
        txn({
          occurred_at: day(d),
          amount: 25_000,
          direction: 'out',
          counterparty_name: 'KPLC PREPAID',
          category: 'Utilities',
        }),
        txn({
          occurred_at: day(d),
          amount: 40_000,
          direction: 'out',
          counterparty_name: 'LANDLORD',
          category: 'Rent',
        }),
      )
  }
  return batch
}

describe('customers and insights tell the truth', () => {
  let kit: TestKit
  let app: ReturnType<typeof createAnalyticsApp>
  const json = async (path: string, tenantId = 'shop') =>
    (await api(app, await kit.authFor({ tenantId, role: 'Analyst', userId: 'usr_a' })).get(path))
      .body

  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
    // Today is 10 days after the statement's last day (2026-03-30).
    kit.ctx.clock.set('2026-04-09T12:00:00Z')
    app = createAnalyticsApp(kit.ctx)
    await subscribeTransactions(kit.ctx)
    await kit.bus.publish(topics.transactionsCategorized, envelope('shop', month()))
  })
  afterAll(() => kit.cleanup())

  it('cleans masked phones out of statement names', () => {
    expect(cleanName('254739***838 FAITH CHEPKOECH')).toBe('FAITH CHEPKOECH')
    expect(cleanName('0733***444 - MARY WANJIKU')).toBe('MARY WANJIKU')
    expect(cleanName('JOHN KAMAU')).toBe('JOHN KAMAU')
    expect(cleanName('254739***838')).toBeNull()
  })

  it('ranks the people who pay as customers and those paid as suppliers', async () => {
    const customers = await json('/api/v1/analytics/customers')
    expect(customers.data.map((c: any) => c.counterparty)).toEqual([
      'FAITH CHEPKOECH',
      'PETER OTIENO',
    ])
    const suppliers = await json('/api/v1/analytics/customers?direction=out')
    expect(suppliers.data.map((c: any) => c.counterparty)).toEqual(['LANDLORD', 'KPLC PREPAID'])
  })

  it('compares periods ending at the last day with data and says which day', async () => {
    const body = await json('/api/v1/analytics/insights')
    expect(body.as_of).toBe('2026-03-30')
    const week = body.data.find((i: any) => i.type === 'revenue_change_wow')
    expect(week.title).not.toContain('down')
    expect(week.numbers.change_pct).toBeGreaterThanOrEqual(0)
    expect(week.message).toMatch(
      /^Customers paid you KES \d{1,3}(,\d{3})*\.\d{2} in the 7 days to 30 Mar 2026, /,
    )
    for (const i of body.data) {
      expect(i.message).not.toMatch(/\d{4}-\d{2}-\d{2}|KES \d{4,}|_/)
    }
  })

  it('reads customer figures from the rollups as scope=me reads them from the rows', async () => {
    const tenant = await json('/api/v1/analytics/insights')
    const mine = await json('/api/v1/analytics/insights?scope=me')
    for (const type of ['customer_concentration', 'new_vs_returning_customers']) {
      const a = tenant.data.find((i: any) => i.type === type)
      expect(a).toBeDefined()
      expect(mine.data.find((i: any) => i.type === type)).toEqual(a)
    }
    const concentration = tenant.data.find((i: any) => i.type === 'customer_concentration')
    expect(concentration.numbers).toMatchObject({ customers: 2, total_revenue: 30_000 + 6435 })
  })

  it('counts a transaction in the next read, whatever it read before', async () => {
    // A shop of its own: the others read the month as it is.
    await kit.bus.publish(topics.transactionsCategorized, envelope('grows', month()))
    const before = await json('/api/v1/analytics/insights', 'grows')
    const total = (b: any) =>
      b.data.find((i: any) => i.type === 'customer_concentration').numbers.total_revenue
    await kit.bus.publish(
      topics.transactionsCategorized,
      envelope('grows', [
        txn({
          occurred_at: day(29),
          amount: 500,
          counterparty_name: 'NEW BUYER',
          user_id: 'usr_a',
        }),
      ]),
    )
    const after = await json('/api/v1/analytics/insights', 'grows')
    expect(total(before)).toBe(30_000 + 6435)
    expect(total(after)).toBe(total(before) + 500)
    const fresh = (b: any) =>
      b.data.find((i: any) => i.type === 'new_vs_returning_customers').numbers.new
    expect(fresh(after)).toBe(fresh(before) + 1)
  })
})
