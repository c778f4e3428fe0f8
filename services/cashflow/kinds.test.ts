import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/cashflow/migrations.ts'
import { type StatementProcessedEvent, type TransactionEvent, topics } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeCategorized, subscribeStatementsProcessed } from './consumers.ts'
import { createCashflowApp } from './routes.ts'

/*
 * What cashflow counts (DESIGN §16 "Kinds"): only money earned and spent is inflow, outflow,
 * burn and health; loans, savings and transfers are their own lines. Each tenant is seeded by a
 * function its tests call, with fixed event ids, so a test passes alone and in any order.
 */
let kit: TestKit
let app: ReturnType<typeof createCashflowApp>

const txn = (id: string, o: Partial<TransactionEvent> & { occurred_at: string; amount: number }) =>
  ({
    transaction_id: id,
    direction: 'in',
    description: 'test',
    source: 'statement',
    category: 'Other',
    ...o,
  }) as TransactionEvent

const publish = (tenantId: string, id: string, transactions: TransactionEvent[]) =>
  kit.bus.publish(topics.transactionsCategorized, {
    id,
    type: topics.transactionsCategorized,
    version: 1,
    tenant_id: tenantId,
    occurred_at: '2026-01-01T08:00:00.000Z',
    data: { transactions },
  })

const statementProcessed = (
  tenantId: string,
  id: string,
  occurredAt: string,
  data: Partial<StatementProcessedEvent>,
) =>
  kit.bus.publish(topics.statementsProcessed, {
    id,
    type: topics.statementsProcessed,
    version: 1,
    tenant_id: tenantId,
    occurred_at: occurredAt,
    data: {
      import_id: `imp_${id}`,
      file_name: 'statement.pdf',
      accepted: 10,
      duplicates: 0,
      rejected: 0,
      ...data,
    },
  })

async function get(tenantId: string, path: string) {
  const res = await app.handle(
    new Request(`http://cashflow${path}`, {
      headers: await kit.authFor({ tenantId, role: 'Admin' }),
    }),
  )
  return { status: res.status, body: (await res.json()) as any }
}

const at = (day: number, hour = 9) => new Date(Date.UTC(2025, 11, 2 + day, hour - 3)).toISOString()

/**
 * 30 days (2 Dec 2025 – 31 Dec 2025) of a shop on Fuliza: each day customers pay 1,000, the owner
 * pays a supplier 1,400 of which 600 comes from a Fuliza draw, a 20 charge, and repays 500 of
 * Fuliza; every 10th day 2,000 goes to M-Shwari. Earned 30,000, spent 42,600: a deficit of
 * 12,600 funded by 18,000 of loans. The balance ends at 0.00.
 */
async function seedFuliza() {
  const list: TransactionEvent[] = []
  for (let d = 0; d < 30; d++) {
    const r = `RF${String(d).padStart(2, '0')}`
    list.push(
      txn(`f_sale_${d}`, { occurred_at: at(d, 8), amount: 1000, kind: 'customer_payment' }),
      txn(`f_draw_${d}`, {
        occurred_at: at(d, 10),
        amount: 600,
        kind: 'loan_drawn',
        leg: 'loan',
        receipt_number: r,
        description: 'OverDraft of Credit Party',
      }),
      txn(`f_pay_${d}`, {
        occurred_at: at(d, 10),
        amount: 1400,
        direction: 'out',
        kind: 'supplier_payment',
        receipt_number: r,
        category: 'Inventory',
      }),
      txn(`f_fee_${d}`, {
        occurred_at: at(d, 10),
        amount: 20,
        direction: 'out',
        kind: 'charge',
        leg: 'charge',
        receipt_number: r,
      }),
      txn(`f_repay_${d}`, {
        occurred_at: at(d, 18),
        amount: 500,
        direction: 'out',
        kind: 'loan_repaid',
        leg: 'repay',
        description: 'OD Loan Repayment',
        balance: d === 29 ? 0 : 100,
      }),
    )
    if (d % 10 === 0)
      list.push(
        txn(`f_save_${d}`, {
          occurred_at: at(d, 12),
          amount: 2000,
          direction: 'out',
          kind: 'savings_out',
        }),
        txn(`f_unsave_${d}`, {
          occurred_at: at(d, 13),
          amount: 2000,
          kind: 'savings_in',
        }),
      )
  }
  await publish('fuliza', 'evt_seed_fuliza', list)
}

/** The same 30 days of a shop that earns more than it spends and borrows nothing. */
async function seedEarner(tenantId: string) {
  const list: TransactionEvent[] = []
  for (let d = 0; d < 30; d++) {
    list.push(
      txn(`${tenantId}_sale_${d}`, {
        occurred_at: at(d, 8),
        amount: 2000,
        kind: 'customer_payment',
      }),
      txn(`${tenantId}_pay_${d}`, {
        occurred_at: at(d, 12),
        amount: 1200,
        direction: 'out',
        kind: 'supplier_payment',
        balance: 50_000 + d * 800,
      }),
    )
  }
  await publish(tenantId, `evt_seed_${tenantId}`, list)
}

beforeAll(async () => {
  kit = await createTestKit('cashflow', { migrations })
  kit.ctx.clock.set('2026-01-01T09:00:00Z')
  app = createCashflowApp(kit.ctx)
  await subscribeCategorized(kit.ctx, topics.transactionsCategorized)
  await subscribeStatementsProcessed(kit.ctx, topics.statementsProcessed)
})
afterAll(() => kit.cleanup())

describe('a Fuliza-heavy month', () => {
  it('gives the true operating net: draws are not inflow, repayments not outflow', async () => {
    await seedFuliza()
    const res = await get('fuliza', '/api/v1/cashflow/summary/fuliza')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      as_of: '2025-12-31',
      inflow: 30_000,
      outflow: 42_600,
      net: -12_600,
      financing: {
        inflow: 18_000,
        outflow: 15_000,
        net: 3_000,
        kinds: {
          loan_drawn: { inflow: 18_000, outflow: 0, count: 30 },
          loan_repaid: { inflow: 0, outflow: 15_000, count: 30 },
        },
      },
      transfers: {
        inflow: 6_000,
        outflow: 6_000,
        net: 0,
        kinds: { savings_out: { outflow: 6_000, count: 3 }, savings_in: { inflow: 6_000 } },
      },
      total: { inflow: 54_000, outflow: 63_600, net: -9_600 },
      loan_reliance: 0.6,
      balance: 0,
      burn_rate: 420,
      runway_days: 0,
      liquidity_ratio: 0.7,
    })
    expect(res.body.financing.kinds.loan_drawn.label).toBe('Loan drawn (Fuliza, overdraft)')
  })

  it('is not healthy: a deficit funded by loans is at risk, and says so', async () => {
    await seedFuliza()
    const { body } = await get('fuliza', '/api/v1/cashflow/summary/fuliza')
    const codes = body.reasons.map((r: { code: string }) => r.code)
    expect(codes).toEqual(
      expect.arrayContaining([
        'OUTFLOW_EXCEEDS_INFLOW',
        'RELIES_ON_LOANS',
        'DEFICIT_FUNDED_BY_LOANS',
      ]),
    )
    expect(codes).not.toContain('HEALTHY')
    expect(body.health_status).toBe('at_risk')
    expect(body.health_score).toBeLessThan(50)
    const loans = body.reasons.find((r: { code: string }) => r.code === 'RELIES_ON_LOANS')
    expect(loans.message).toContain('KES 18,000')
    expect(loans.message).toContain('60%')
  })

  it('keeps loans and transfers out of the daily series, trends and forecast, and lists them per day', async () => {
    await seedFuliza()
    const daily = await get('fuliza', '/api/v1/cashflow/daily?from=2025-12-02&to=2025-12-02')
    expect(daily.body.data[0]).toMatchObject({
      inflow: 1000,
      outflow: 1420,
      net: -420,
      balance_moves: {
        loan_drawn: { inflow: 600, outflow: 0, net: 600 },
        loan_repaid: { inflow: 0, outflow: 500, net: -500 },
        savings_out: { outflow: 2000 },
        savings_in: { inflow: 2000 },
      },
    })
    const analysis = await app.handle(
      new Request('http://cashflow/api/v1/cashflow/analyze', {
        method: 'POST',
        headers: {
          ...(await kit.authFor({ tenantId: 'fuliza', role: 'Admin' })),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ options: { recurring: true } }),
      }),
    )
    const a = (await analysis.json()) as any
    expect(a).toMatchObject({
      from: '2025-12-02',
      to: '2025-12-31',
      totals: { inflow: 30_000, outflow: 42_600, net: -12_600 },
      financing: { inflow: 18_000, outflow: 15_000 },
      transfers: { inflow: 6_000, outflow: 6_000 },
    })
    for (const r of a.recurring) expect(r.counterparty).not.toContain('repayment')
    const forecast = await get('fuliza', '/api/v1/cashflow/forecast?horizon=7')
    expect(forecast.body.history).toMatchObject({ from: '2025-12-02', to: '2025-12-31' })
    // The operating net is -420 every day: the forecast follows it, not the Fuliza-funded +180.
    for (const p of forecast.body.points) expect(p.net).toBeCloseTo(-420, 0)
  })

  it('counts an older event without a kind by its direction, and moves a re-sent one to its kind', async () => {
    const old = txn('old_1', { occurred_at: at(3), amount: 700, category: 'Revenue' })
    await publish('legacy', 'evt_legacy_1', [
      old,
      txn('old_2', { occurred_at: at(3), amount: 300, direction: 'out', category: 'Rent' }),
    ])
    let s = await get('legacy', '/api/v1/cashflow/summary/legacy?from=2025-12-05&to=2025-12-05')
    expect(s.body).toMatchObject({ inflow: 700, outflow: 300, financing: { inflow: 0 } })
    // The same transaction, now known to be a Fuliza draw: it leaves inflow for financing.
    await publish('legacy', 'evt_legacy_2', [{ ...old, kind: 'loan_drawn' }])
    s = await get('legacy', '/api/v1/cashflow/summary/legacy?from=2025-12-05&to=2025-12-05')
    expect(s.body).toMatchObject({
      inflow: 0,
      outflow: 300,
      financing: { inflow: 700, kinds: { loan_drawn: { inflow: 700, count: 1 } } },
      total: { inflow: 700, outflow: 300 },
    })
  })
})

describe('the balance after a Fuliza group', () => {
  it('ends on the booked last row of a same-second group, whatever order it arrives in', async () => {
    const noon = at(5, 12)
    const group = [
      txn('g_draw', { occurred_at: noon, amount: 1420, kind: 'loan_drawn', balance: 1420 }),
      txn('g_pay', {
        occurred_at: noon,
        amount: 1400,
        direction: 'out',
        kind: 'supplier_payment',
        balance: 20,
      }),
      txn('g_fee', { occurred_at: noon, amount: 20, direction: 'out', kind: 'charge', balance: 0 }),
    ]
    const morning = txn('g_sale', {
      occurred_at: at(5, 8),
      amount: 500,
      kind: 'customer_payment',
      balance: 0,
    })
    // Opening and closing are both 0.00: only the balance before the group tells the end.
    await publish('group-a', 'evt_group_a', [morning, ...group])
    await publish('group-b', 'evt_group_b', [morning, ...[...group].reverse()])
    await publish('group-c', 'evt_group_c', [group[2]!, group[0]!, morning, group[1]!])
    for (const tenant of ['group-a', 'group-b', 'group-c']) {
      const { body } = await get(tenant, `/api/v1/cashflow/summary/${tenant}`)
      expect({ tenant, balance: body.balance }).toEqual({ tenant, balance: 0 })
    }
  })
})

describe('health', () => {
  it('is healthy for a business that earns more than it spends, borrows nothing and adds up', async () => {
    await seedEarner('earner-ok')
    const { body } = await get('earner-ok', '/api/v1/cashflow/summary/earner-ok')
    expect(body).toMatchObject({ inflow: 60_000, outflow: 36_000, health_status: 'healthy' })
    expect(body.health_score).toBe(100)
    expect(body.reasons.map((r: { code: string }) => r.code)).toEqual(['HEALTHY'])
    expect(body.data_quality).toBeNull()
  })

  it('is never healthy while the latest statement does not add up, and says where', async () => {
    await seedEarner('unproven')
    const finding =
      'This statement is missing KES 54,272.00 of money in between 5 Nov 2021 16:10 and 5 Nov 2021 19:40: its running balance does not follow from the rows read.'
    await statementProcessed('unproven', 'evt_stmt_2', '2026-01-01T08:30:00.000Z', {
      verdict: 'does_not_add_up',
      finding,
    })
    // An older import's proof arriving late does not hide the newer one's finding.
    await statementProcessed('unproven', 'evt_stmt_1', '2026-01-01T08:00:00.000Z', {
      verdict: 'proven',
    })
    let { body } = await get('unproven', '/api/v1/cashflow/summary/unproven')
    expect(body.health_status).toBe('unproven')
    expect(body.health_score).toBeLessThanOrEqual(59)
    expect(body.data_quality).toMatchObject({
      verdict: 'does_not_add_up',
      finding,
      import_id: 'imp_evt_stmt_2',
    })
    const why = body.reasons.find((r: { code: string }) => r.code === 'STATEMENT_DOES_NOT_ADD_UP')
    expect(why.message).toContain('KES 54,272.00')
    expect(body.reasons.map((r: { code: string }) => r.code)).not.toContain('HEALTHY')

    // A later import that adds up lifts the cap.
    await statementProcessed('unproven', 'evt_stmt_3', '2026-01-01T08:45:00.000Z', {
      verdict: 'proven',
    })
    body = (await get('unproven', '/api/v1/cashflow/summary/unproven')).body
    expect(body).toMatchObject({
      health_status: 'healthy',
      data_quality: { verdict: 'proven', finding: null },
    })
  })

  it('caps a small deficit below healthy even when nothing else is wrong', async () => {
    const list: TransactionEvent[] = []
    for (let d = 0; d < 30; d++)
      list.push(
        txn(`thin_in_${d}`, { occurred_at: at(d, 8), amount: 1000, kind: 'customer_payment' }),
        txn(`thin_out_${d}`, {
          occurred_at: at(d, 12),
          amount: 1010,
          direction: 'out',
          kind: 'supplier_payment',
          balance: 1_000_000,
        }),
      )
    await publish('thin', 'evt_seed_thin', list)
    const { body } = await get('thin', '/api/v1/cashflow/summary/thin')
    expect(body.net).toBe(-300)
    expect(body.health_status).toBe('watch')
    expect(body.health_score).toBeLessThanOrEqual(69)
  })
})

describe('the sane window', () => {
  it('keeps rows dated before 2007 or days ahead out of every series and forecast', async () => {
    await publish('dates', 'evt_dates', [
      txn('d_1970', { occurred_at: '1970-01-01T00:00:00Z', amount: 5, kind: 'customer_payment' }),
      txn('d_2099', { occurred_at: '2099-12-31T00:00:00Z', amount: 5, kind: 'customer_payment' }),
      txn('d_ok', { occurred_at: at(29), amount: 100, kind: 'customer_payment' }),
    ])
    const started = performance.now()
    const forecast = await get('dates', '/api/v1/cashflow/forecast')
    expect(performance.now() - started).toBeLessThan(500)
    expect(forecast.body.history).toEqual({ from: '2025-12-31', to: '2025-12-31', days: 1 })
    const summary = await get('dates', '/api/v1/cashflow/summary/dates')
    expect(summary.body).toMatchObject({ as_of: '2025-12-31', inflow: 100 })
  })
})
