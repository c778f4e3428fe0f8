import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/parser/migrations.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import type { ParsedTransaction } from './parsed.ts'
import { storeTransactions } from './store.ts'

let kit: TestKit
beforeAll(async () => {
  kit = await createTestKit('parser', { migrations })
})
afterAll(() => kit.cleanup())

/** A receipt's amount: every report of one receipt says the same movement. */
const amountOf = (receipt: string | null, cents: number) =>
  receipt ? 100 + ([...receipt].reduce((n, c) => n * 31 + c.charCodeAt(0), 7) % 100_000) : cents

const row = (receipt: string | null, cents: number, byReceipt = false): ParsedTransaction => ({
  occurredAt: new Date(Date.UTC(2025, 0, 1) + cents * 1000).toISOString(),
  amount: byReceipt ? amountOf(receipt, cents) : cents,
  direction: 'in',
  counterpartyName: null,
  counterpartyPhone: null,
  description: `row ${cents}`,
  receiptNumber: receipt,
  balance: null,
})

const store = (tenantId: string, source: 'api' | 'sms' | 'statement', rows: ParsedTransaction[]) =>
  storeTransactions(kit.ctx, kit.registry.tenant('parser', tenantId), {
    tenantId,
    userId: 'usr_1',
    source,
    items: rows.map((transaction, index) => ({ transaction, ref: { index } })),
    checkLimit: false,
  })

describe('storeTransactions', () => {
  it('tells new rows from duplicates row by row when they go in many at a time', async () => {
    // Stored before by another channel: every third receipt of the batch below.
    expect(
      store(
        'mix',
        'sms',
        [...Array(40)].map((_, i) => row(`OLD${i}`, i + 1, true)),
      ).accepted,
    ).toBe(40)
    const rows: ParsedTransaction[] = []
    const expected: Array<{ receipt: string | null; matched: boolean }> = []
    const seen = new Set<string>()
    for (let i = 0; i < 173; i++) {
      const receipt =
        i % 3 === 0 ? `OLD${(i / 3) % 40}` : i % 7 === 0 ? `NEW${i % 5}` : i % 11 ? `NEW${i}` : null
      rows.push(row(receipt, 1000 + i, true))
      // The first report of a receipt is new, or matched when another channel stored it; a
      // receipt this batch had already reported is a plain duplicate and sends nothing.
      if (receipt !== null && seen.has(receipt)) continue
      if (receipt !== null) seen.add(receipt)
      expected.push({ receipt, matched: receipt?.startsWith('OLD') ?? false })
    }
    await kit.ctx.relay.flush()
    const published = kit.bus.published.length
    const result = store('mix', 'statement', rows)
    const fresh = expected.filter((e) => !e.matched).length
    expect(result).toMatchObject({
      accepted: fresh,
      duplicates: rows.length - fresh,
      matched: expected.length - fresh,
      rejected: 0,
    })
    await kit.ctx.relay.flush()
    const sent = kit.bus.published
      .slice(published)
      .filter((e) => e.type === 'mobilemoney.transactions.raw')
      .flatMap((e) => (e.data as { transactions: Array<Record<string, unknown>> }).transactions)
    expect(sent.map((t) => ({ receipt: t.receipt_number, matched: t.matched === true }))).toEqual(
      expected,
    )
    const db = kit.registry.tenant('parser', 'mix')
    const count = db.sqlite
      .query("SELECT count(*) AS n FROM transactions WHERE tenant_id = 'mix'")
      .get() as { n: number }
    expect(count.n).toBe(40 + fresh)
  })

  it('finds a reversed transaction stored earlier in the same batch', () => {
    const rows = [...Array(60)].map((_, i) => row(`REV${i}`, 5000 + i))
    rows.push({ ...row('REVX1', 0), amount: null, reversalOf: 'REV3' })
    const result = store('rev', 'statement', rows)
    expect(result).toMatchObject({ accepted: 61, duplicates: 0, rejected: 0 })
    const db = kit.registry.tenant('parser', 'rev')
    const r = db.sqlite
      .query("SELECT amount, direction FROM transactions WHERE receipt_number = 'REVX1'")
      .get()
    expect(r).toEqual({ amount: 5003, direction: 'out' })
  })

  it('stores a row under the id it was given, and sends that id', async () => {
    const db = kit.registry.tenant('parser', 'given')
    const published = kit.bus.published.length
    const id = 'txn_01a2071e3bb076a08394a452875fd1c6'
    const result = storeTransactions(kit.ctx, db, {
      tenantId: 'given',
      userId: 'usr_1',
      source: 'statement',
      items: [
        { transaction: row('GIVEN1', 1), ref: { row: 1 }, id },
        { transaction: row('GIVEN2', 2), ref: { row: 2 } },
      ],
      checkLimit: false,
    })
    expect(result).toMatchObject({ accepted: 2 })
    const ids = db.sqlite
      .query<{ id: string }, []>(
        "SELECT id FROM transactions WHERE tenant_id = 'given' ORDER BY receipt_number",
      )
      .all()
      .map((r) => r.id)
    expect(ids[0]).toBe(id)
    expect(ids[1]).toMatch(/^txn_[0-9a-f]{32}$/)
    await kit.ctx.relay.flush()
    const sent = kit.bus.published
      .slice(published)
      .filter((e) => e.type === 'mobilemoney.transactions.raw')
      .flatMap((e) => (e.data as { transactions: Array<{ transaction_id: string }> }).transactions)
    expect(sent.map((t) => t.transaction_id)).toEqual(ids)
  })
})

describe('the legs of one receipt (DESIGN §16)', () => {
  const leg = (
    receipt: string,
    cents: number,
    direction: 'in' | 'out',
    description: string,
  ): ParsedTransaction => ({
    occurredAt: '2025-03-01T10:00:00.000Z',
    amount: cents,
    direction,
    counterpartyName: null,
    counterpartyPhone: null,
    description,
    receiptNumber: receipt,
    balance: null,
  })
  const fuliza = [
    leg('SCL1AB2CD3', 150_000, 'out', 'Pay Bill Online Fuliza M-Pesa to 888880 - KPLC PREPAID'),
    leg('SCL1AB2CD3', 120_000, 'in', 'OverDraft of Credit Party'),
    leg('SCL1AB2CD3', 2_300, 'out', 'Pay Bill Charge'),
    leg('SCL1AB2CD3', 30_000, 'out', 'OD Loan Repayment to 232323 - M-PESA Overdraw'),
    leg('SCL1AB2CD3', 90_000, 'out', 'OD Loan Repayment to 232323 - M-PESA Overdraw'),
  ]

  it('keeps a payment, its charge, the overdraft drawn and both repayments under one receipt', () => {
    expect(store('legs', 'statement', fuliza)).toMatchObject({ accepted: 5, duplicates: 0 })
    const kinds = kit.registry
      .tenant('parser', 'legs')
      .sqlite.query<{ kind: string; leg: string }, []>(
        "SELECT kind, leg FROM transactions WHERE tenant_id = 'legs' ORDER BY amount",
      )
      .all()
    expect(kinds.map((k) => k.kind)).toEqual([
      'charge',
      'loan_repaid',
      'loan_repaid',
      'loan_drawn',
      'supplier_payment',
    ])
    expect(new Set(kinds.map((k) => k.leg)).size).toBe(5)
  })

  it('takes the same statement again as duplicates only', () => {
    expect(store('legs-again', 'statement', fuliza)).toMatchObject({ accepted: 5 })
    expect(store('legs-again', 'statement', fuliza)).toMatchObject({ accepted: 0, duplicates: 5 })
  })

  it("joins another channel's report of the payment leg and keeps the charge apart", () => {
    expect(store('legs2', 'sms', [fuliza[0]!])).toMatchObject({ accepted: 1 })
    expect(store('legs2', 'statement', fuliza.slice(0, 3))).toMatchObject({
      accepted: 2,
      duplicates: 1,
      matched: 1,
    })
  })
})
