import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/categorizer/migrations.ts'
import { type TransactionEvent, topics } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { consumeTransactions } from './consumers.ts'
import { defaultRules, type Rule } from './default-rules.ts'
import { Categorizer } from './engine.ts'
import { createTenantStates, type TenantStates } from './state.ts'

let kit: TestKit
let states: TenantStates
beforeAll(async () => {
  kit = await createTestKit('categorizer', { migrations })
  states = createTenantStates(kit.ctx)
})
afterAll(() => kit.cleanup())

const row = (over: Partial<TransactionEvent>): TransactionEvent => ({
  transaction_id: `txn_${crypto.randomUUID().slice(0, 12)}`,
  occurred_at: '2024-03-05T10:00:00.000Z',
  amount: 100,
  direction: 'out',
  description: 'something',
  source: 'statement',
  ...over,
})

/** Consumes one batch for `tenant` and answers what the categorizer published for it. */
async function consume(tenant: string, id: string, batch: TransactionEvent[]) {
  await kit.ctx.relay.flush()
  const before = kit.bus.published.length
  consumeTransactions(kit.ctx, states, { id, tenant_id: tenant }, batch)
  await kit.ctx.relay.flush()
  return kit.bus.published
    .slice(before)
    .filter((e) => e.type === topics.transactionsCategorized && e.tenant_id === tenant)
    .flatMap((e) => (e.data as { transactions: TransactionEvent[] }).transactions)
}

describe('ledger legs', () => {
  it('keeps a payment and its charge under one receipt as two transactions, the charge Other', async () => {
    const pay = row({
      description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1',
      amount: 1500,
      receipt_number: 'SLG1AAA001',
      kind: 'supplier_payment',
    })
    const charge = row({
      description: 'Pay Bill Charge',
      amount: 23,
      receipt_number: 'SLG1AAA001',
      kind: 'charge',
      leg: 'charge',
    })
    const out = await consume('legs-a', 'evt_legs_a', [pay, charge])
    expect(out.map((t) => t.transaction_id)).toEqual([pay.transaction_id, charge.transaction_id])
    expect(out[0]).toMatchObject({ kind: 'supplier_payment', category: 'Utilities' })
    expect(out[1]).toMatchObject({ kind: 'charge', leg: 'charge', category: 'Other' })
  })

  it('joins an STK payment and its statement row, and the statement kind wins', async () => {
    const stk = row({
      source: 'payment',
      channel: 'stk',
      direction: 'in',
      amount: 800,
      description: 'STK payment from 254712345678',
      receipt_number: 'SLG2BBB002',
    })
    const first = await consume('legs-b', 'evt_legs_b1', [stk])
    expect(first[0]).toMatchObject({ kind: 'customer_payment', category: 'Revenue' })
    const statementRow = row({
      direction: 'in',
      amount: 800,
      description: 'Funds received from 254712345678 - JANE',
      receipt_number: 'SLG2BBB002',
      kind: 'own_transfer',
      leg: '',
    })
    const charge = row({
      amount: 5,
      description: 'Customer Transfer of Funds Charge',
      receipt_number: 'SLG2BBB002',
      kind: 'charge',
      leg: 'charge',
    })
    const later = await consume('legs-b', 'evt_legs_b2', [statementRow, charge])
    expect(later[0]).toMatchObject({
      transaction_id: stk.transaction_id,
      kind: 'own_transfer',
      category: 'Other',
    })
    expect(later[0]!.reports!.map((r) => r.source).sort()).toEqual(['payment', 'statement'])
    expect(later[1]).toMatchObject({ transaction_id: charge.transaction_id, leg: 'charge' })
  })

  it("keeps a report's kind and leg when a later channel reports the same leg", async () => {
    const sms = row({
      source: 'sms',
      amount: 13,
      description: 'Transaction cost',
      receipt_number: 'SLG3CCC003',
      kind: 'charge',
      leg: 'charge',
    })
    await consume('legs-c', 'evt_legs_c1', [sms])
    const again = await consume('legs-c', 'evt_legs_c2', [
      row({ source: 'api', amount: 13, receipt_number: 'SLG3CCC003', leg: 'charge' }),
    ])
    expect(again[0]).toMatchObject({ transaction_id: sms.transaction_id, kind: 'charge' })
    expect(again[0]!.leg).toBe('charge')
  })

  it('still joins a receipt claimed before legs existed (its key is the bare receipt)', async () => {
    const db = kit.registry.tenant('categorizer', 'legs-d')
    const old = row({ direction: 'in', amount: 50, receipt_number: 'SLG4DDD004', source: 'sms' })
    db.sqlite
      .query('INSERT INTO receipts (tenant_id, receipt_number, transaction_id) VALUES (?, ?, ?)')
      .run('legs-d', 'SLG4DDD004', old.transaction_id)
    const later = await consume('legs-d', 'evt_legs_d', [
      row({ direction: 'in', amount: 50, receipt_number: 'SLG4DDD004', leg: '' }),
    ])
    expect(later[0]!.transaction_id).toBe(old.transaction_id)
  })
})

describe('kinds bound the category', () => {
  const tenantRule = (category: Rule['category'], pattern: string): Rule => ({
    ...defaultRules[0]!,
    id: `rul_${pattern}`,
    pattern,
    category,
    priority: 100,
    direction: null,
    builtin: false,
  })
  const c = new Categorizer([
    tenantRule('Revenue', 'overdraft'),
    tenantRule('Transport', 'mshwari'),
    ...defaultRules,
  ])
  const draw = {
    description: 'OverDraft of Credit Party',
    direction: 'in' as const,
    amount: 300,
  }

  it('never calls a Fuliza draw Revenue, even when the owner rule says so', () => {
    expect(c.categorize({ ...draw, kind: 'loan_drawn' })).toMatchObject({
      category: 'Other',
      source: 'default',
    })
    expect(new Categorizer(defaultRules).categorize({ ...draw, kind: 'loan_drawn' }).category).toBe(
      'Other',
    )
  })

  it("lets the owner's own rule pick another category for a non-revenue kind", () => {
    const r = c.categorize({ description: 'To MShwari', direction: 'out', kind: 'savings_out' })
    expect(r).toMatchObject({ category: 'Transport', source: 'rule' })
  })

  it('gives charges Other, airtime Utilities and leaves a customer payment Revenue', () => {
    const plain = new Categorizer(defaultRules)
    const charge = plain.categorize({
      description: 'Pay Bill Charge',
      direction: 'out',
      kind: 'charge',
    })
    expect(charge.category).toBe('Other')
    const airtime = plain.categorize({
      description: 'Airtime Purchase',
      direction: 'out',
      kind: 'airtime',
    })
    expect(airtime.category).toBe('Utilities')
    const money = plain.categorize({
      description: 'M-Shwari Withdraw',
      direction: 'in',
      kind: 'savings_in',
    })
    expect(money.category).toBe('Other')
    const sale = plain.categorize({
      description: 'Funds received from 2547 - JANE',
      direction: 'in',
      kind: 'customer_payment',
    })
    expect(sale.category).toBe('Revenue')
  })
})
