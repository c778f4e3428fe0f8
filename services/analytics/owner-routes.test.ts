import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/analytics/migrations.ts'
import { type EventEnvelope, type TransactionEvent, topics } from '../../schema/events.ts'
import { api } from '../../test/support/client.ts'
import { newId } from '../kernel/ids.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeTransactions } from './consumers.ts'
import { createAnalyticsApp } from './routes.ts'

let seq = 0
const txn = (over: Partial<TransactionEvent>): TransactionEvent => ({
  transaction_id: `o-${++seq}`,
  occurred_at: '2026-03-01T09:00:00Z',
  amount: 100,
  direction: 'in',
  counterparty_name: null,
  counterparty_phone: null,
  description: 'x',
  receipt_number: `Q${seq}`,
  balance: null,
  source: 'statement',
  user_id: 'usr_a',
  category: 'Revenue',
  category_confidence: 0.9,
  category_source: 'rule',
  rule_id: null,
  kind: 'customer_payment',
  ...over,
})
const day = (d: number) => new Date(Date.UTC(2026, 2, 1 + d, 9)).toISOString()
const out = (d: number, name: string, category: string, amount: number) =>
  txn({
    occurred_at: day(d),
    direction: 'out',
    counterparty_name: name,
    category,
    amount,
    kind: 'supplier_payment',
  })

/**
 * Six weeks of a shop (1 Mar – 11 Apr 2026): two customers daily (a third from day 35), a
 * wholesaler, the landlord, KPLC, two staff, an agent and Fuliza.
 */
function shop(): TransactionEvent[] {
  const batch: TransactionEvent[] = []
  for (let d = 0; d < 42; d++) {
    batch.push(
      txn({ occurred_at: day(d), amount: 1000, counterparty_phone: '254722000001' }),
      txn({ occurred_at: day(d), amount: 300, counterparty_phone: '254722000002' }),
    )
    if (d >= 35)
      batch.push(txn({ occurred_at: day(d), amount: 700, counterparty_phone: '254722000003' }))
    if (d % 7 === 0) batch.push(out(d, 'BIDCO WHOLESALE', 'Inventory', 5000))
  }
  batch.push(
    out(0, 'LANDLORD', 'Rent', 20_000),
    out(31, 'LANDLORD', 'Rent', 20_000),
    out(5, 'KPLC PREPAID', 'Utilities', 3000),
    out(29, 'JANE SHOP ASSISTANT', 'Salaries', 9000),
    out(29, 'TOM WATCHMAN', 'Salaries', 6000),
    txn({
      occurred_at: day(10),
      direction: 'out',
      counterparty_name: 'AGENT 12345 KIOSK',
      amount: 4000,
      kind: 'cash_withdrawal',
      category: 'Other',
    }),
    txn({
      occurred_at: day(12),
      counterparty_name: 'FULIZA M-PESA',
      amount: 2500,
      kind: 'loan_drawn',
      category: 'Other',
    }),
  )
  return batch
}

describe('the owner routes: periods, groups and reports', () => {
  let kit: TestKit
  let app: ReturnType<typeof createAnalyticsApp>
  const as = async (role: 'Analyst' | 'Viewer' = 'Analyst') =>
    api(app, await kit.authFor({ tenantId: 'shop', role, userId: 'usr_a' }))
  const json = async (path: string) => (await (await as()).get(path)).body

  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
    // Today is months after the data ended: periods anchor on the last day with data.
    kit.ctx.clock.set('2026-08-20T12:00:00Z')
    app = createAnalyticsApp(kit.ctx)
    await subscribeTransactions(kit.ctx)
    const envelope: EventEnvelope = {
      id: newId('evt'),
      type: topics.transactionsCategorized,
      version: 1,
      tenant_id: 'shop',
      occurred_at: new Date().toISOString(),
      data: { transactions: shop() },
    }
    await kit.bus.publish(topics.transactionsCategorized, envelope)
  })
  afterAll(() => kit.cleanup())

  it('says which days the data and the statement cover', async () => {
    expect(await json('/api/v1/analytics/period')).toEqual({
      today: '2026-08-20',
      first_day: '2026-03-01',
      last_day: '2026-04-11',
      statement: { from: '2026-03-01', to: '2026-04-11' },
    })
  })

  it('splits the people paid into suppliers, staff, landlord, utilities, agents and lenders', async () => {
    const names = async (group: string) =>
      (await json(`/api/v1/analytics/counterparties?group=${group}`)).data.map(
        (c: { counterparty: string }) => c.counterparty,
      )
    expect(await names('suppliers')).toEqual(['BIDCO WHOLESALE'])
    expect(await names('staff')).toEqual(['JANE SHOP ASSISTANT', 'TOM WATCHMAN'])
    expect(await names('landlord')).toEqual(['LANDLORD'])
    expect(await names('utilities')).toEqual(['KPLC PREPAID'])
    expect(await names('agents')).toEqual(['AGENT 12345 KIOSK'])
    expect(await names('lenders')).toEqual(['FULIZA M-PESA'])
    const customers = await json('/api/v1/analytics/counterparties?group=customers')
    expect(customers.data.map((c: { counterparty_phone: string }) => c.counterparty_phone)).toEqual(
      ['254722000001', '254722000002', '254722000003'],
    )
    const bad = await (await as()).get('/api/v1/analytics/counterparties?group=family')
    expect(bad.status).toBe(422)
  })

  it('counts only customers as new or returning, and compares a period only where the data reaches', async () => {
    const all = await json('/api/v1/analytics/insights')
    const fresh = all.data.find((i: { type: string }) => i.type === 'new_vs_returning_customers')
    expect(fresh.numbers).toMatchObject({ new: 1, returning: 2 })
    // The 30 days before the last 30 start before the first day: no percentage from a sliver.
    const month = all.data.find((i: { type: string }) => i.type === 'revenue_change_mom')
    expect(month.numbers.change_pct).toBeNull()
    expect(month.message).toContain('not enough history to compare')
    const week = all.data.find((i: { type: string }) => i.type === 'revenue_change_wow')
    expect(week.numbers.compared).toBe(true)
    expect(week.numbers.change_pct).toBeGreaterThan(0)

    const period = await json('/api/v1/analytics/insights?from=2026-04-01&to=2026-04-07')
    const change = period.data.find((i: { type: string }) => i.type === 'revenue_change')
    expect(change.numbers).toMatchObject({
      period_days: 7,
      compared: true,
      current: 11_200,
      previous: 9100,
    })
    expect(change.message).toContain('from 1 Apr 2026 to 7 Apr 2026')
    const early = await json('/api/v1/analytics/insights?from=2026-03-01&to=2026-03-14')
    const first = early.data.find((i: { type: string }) => i.type === 'revenue_change')
    expect(first.numbers.compared).toBe(false)
    const wrong = await (await as()).get('/api/v1/analytics/insights?from=2026-04-01T10:00:00Z')
    expect(wrong.status).toBe(422)
  })

  it('exports customers, another group, insights and reconciliation as CSV and PDF', async () => {
    const client = await as()
    const staff = await client.get('/api/v1/analytics/reports/customers?group=staff&format=csv')
    expect(staff.status).toBe(200)
    expect(staff.headers.get('content-type')).toContain('text/csv')
    const text = typeof staff.body === 'string' ? staff.body : JSON.stringify(staff.body)
    expect(text.split('\r\n')[0]).toBe(
      'name,phone,payments,paid_in,paid_out,first_seen,last_seen,segment',
    )
    expect(text).toContain('JANE SHOP ASSISTANT')
    expect(text).not.toContain('BIDCO')
    for (const report of ['customers', 'insights', 'reconciliation']) {
      const pdf = await client.get(
        `/api/v1/analytics/reports/${report}?format=pdf&from=2026-03-01&to=2026-04-11`,
      )
      expect(pdf.status).toBe(200)
      expect(pdf.headers.get('content-type')).toBe('application/pdf')
      expect(pdf.headers.get('content-disposition')).toContain(`${report}-shop-`)
    }
    const viewer = await as('Viewer')
    expect((await viewer.get('/api/v1/analytics/reports/insights')).status).toBe(403)
    expect((await client.get('/api/v1/analytics/reports/everything')).status).toBe(422)
  })
})
