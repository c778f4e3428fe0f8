import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/cashflow/migrations.ts'
import { type TransactionEvent, topics } from '../../schema/events.ts'
import { syntheticBusiness } from '../../test/cashflow-fixtures.ts'
import { api } from '../../test/support/client.ts'
import type { Role } from '../kernel/roles.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeCategorized, subscribeReportedBalance } from './consumers.ts'
import { createCashflowApp } from './routes.ts'

let kit: TestKit
let app: ReturnType<typeof createCashflowApp>
let seq = 0

const txn = (o: Partial<TransactionEvent> & { occurred_at: string; amount: number }) =>
  ({
    transaction_id: `txn_${++seq}`,
    direction: 'in',
    description: 'test',
    source: 'api',
    category: 'sales',
    ...o,
  }) as TransactionEvent

async function publish(tenantId: string, transactions: TransactionEvent[], id = `evt_${++seq}`) {
  await kit.bus.publish(topics.transactionsCategorized, {
    id,
    type: topics.transactionsCategorized,
    version: 1,
    tenant_id: tenantId,
    occurred_at: new Date().toISOString(),
    data: { transactions },
  })
}

async function call(
  tenantId: string,
  method: string,
  path: string,
  body?: unknown,
  role: Role = 'Admin',
) {
  return api(app, await kit.authFor({ tenantId, role })).request(method, path, body)
}

/*
 * Tenants several tests read, each made by one function any of them calls first. The event ids
 * are fixed, so a second call is a redelivery the consumer ignores: every test sets up what it
 * needs and passes alone or in any order.
 */

/** 30 days before 2026-01-01: 1,000 in and 1,500 out per day; the closing balance 50,000. */
async function seedBurner() {
  const list: TransactionEvent[] = []
  for (let d = 0; d < 30; d++) {
    const day = new Date(Date.UTC(2025, 11, 3 + d, 6)).toISOString()
    list.push(txn({ occurred_at: day, amount: 1000, direction: 'in' }))
    list.push(
      txn({
        occurred_at: day,
        amount: 1500,
        direction: 'out',
        category: 'rent',
        balance: d === 29 ? 50_000 : 60_000 - d,
      }),
    )
  }
  await publish('burner', list, 'evt_seed_burner')
}

/** One inflow two days before the test clock's today: not burning, too short to forecast. */
const seedEarner = () =>
  publish(
    'earner',
    [txn({ occurred_at: '2025-12-30T06:00:00Z', amount: 500, balance: 900 })],
    'evt_seed_earner',
  )

/** A synthetic business's year (test/cashflow-fixtures.ts) ending the day before today. */
async function seedShop() {
  const biz = syntheticBusiness({ start: '2025-01-01', days: 365, idPrefix: 'txn_rec' })
  for (let i = 0; i < biz.transactions.length; i += 1000)
    await publish('shop-rec', biz.transactions.slice(i, i + 1000), `evt_seed_shop_${i}`)
}

/** Days from 2025-01-01 as an ISO instant at 09:00 Nairobi. */
const at = (dayIndex: number) => new Date(Date.UTC(2025, 0, 1 + dayIndex, 6, 0, 0)).toISOString()

beforeAll(async () => {
  kit = await createTestKit('cashflow', { migrations })
  kit.ctx.clock.set('2026-01-01T09:00:00Z')
  app = createCashflowApp(kit.ctx)
  await subscribeCategorized(kit.ctx, topics.transactionsCategorized)
  await subscribeReportedBalance(kit.ctx, topics.balanceReported)
})
afterAll(() => kit.cleanup())

describe('cashflow ingest and daily series', () => {
  it('buckets by the tenant day, moves an override between categories and ignores redelivery', async () => {
    const late = txn({ occurred_at: '2025-03-01T22:30:00Z', amount: 100.5, category: 'misc' })
    await publish('tz-shop', [late], 'evt_tz_1')
    await publish('tz-shop', [late], 'evt_tz_1')
    let daily = await call('tz-shop', 'GET', '/api/v1/cashflow/daily?from=2025-03-01&to=2025-03-03')
    expect(daily.status).toBe(200)
    expect(daily.body.data).toHaveLength(3)
    expect(daily.body.data[0]).toMatchObject({ date: '2025-03-01', inflow: 0, net: 0 })
    expect(daily.body.data[1]).toMatchObject({
      date: '2025-03-02',
      inflow: 100.5,
      outflow: 0,
      net: 100.5,
      categories: { misc: { inflow: 100.5, outflow: 0, net: 100.5 } },
    })
    await publish('tz-shop', [{ ...late, category: 'sales' }], 'evt_tz_2')
    await publish('tz-shop', [{ ...late, category: 'sales' }], 'evt_tz_3')
    daily = await call('tz-shop', 'GET', '/api/v1/cashflow/daily?from=2025-03-02&to=2025-03-02')
    expect(daily.body.data[0]).toMatchObject({ inflow: 100.5, net: 100.5 })
    expect(daily.body.data[0].categories).toEqual({
      sales: { inflow: 100.5, outflow: 0, net: 100.5 },
    })
  })

  it('refuses a range that ends before it starts', async () => {
    const res = await call('tz-shop', 'GET', '/api/v1/cashflow/daily?from=2025-03-05&to=2025-03-01')
    expect(res.status).toBe(422)
  })
})

describe('summary', () => {
  it('computes burn rate, runway and liquidity from hand-checked numbers', async () => {
    await seedBurner()
    const res = await call('burner', 'GET', '/api/v1/cashflow/summary/burner')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      tenant_id: 'burner',
      inflow: 30_000,
      outflow: 45_000,
      net: -15_000,
      balance: 50_000,
      burn_rate: 500,
      burn_rate_90: 166.67,
      runway_days: 100,
      liquidity_ratio: 0.67,
    })
    expect(res.body.health_score).toBeLessThan(100)
    expect(res.body.reasons.map((r: { code: string }) => r.code)).toContain(
      'OUTFLOW_EXCEEDS_INFLOW',
    )
    expect(res.body.reasons.map((r: { code: string }) => r.code)).toContain('BURN_ACCELERATING')
  })

  it('answers null runway when the tenant is not burning', async () => {
    await seedEarner()
    const res = await call('earner', 'GET', '/api/v1/cashflow/summary/earner?days=7')
    expect(res.body).toMatchObject({ burn_rate: 0, runway_days: null, balance: 900, inflow: 500 })
  })

  it('keeps tenants apart', async () => {
    const other = await call('earner', 'GET', '/api/v1/cashflow/summary/burner')
    expect(other.status).toBe(403)
    const own = await call('nobody', 'GET', '/api/v1/cashflow/summary/nobody')
    expect(own.body).toMatchObject({ inflow: 0, outflow: 0, balance: null })
    const daily = await call(
      'nobody',
      'GET',
      '/api/v1/cashflow/daily?from=2025-12-03&to=2026-01-01',
    )
    expect(daily.body.data.every((d: { net: number }) => d.net === 0)).toBe(true)
  })
})

describe('summary as of the last day with data', () => {
  it('ends the window at the last day with data when it is older than today, and says so', async () => {
    // A statement that ended ten days before the test clock's today (2026-01-01).
    const list: TransactionEvent[] = []
    for (let d = 0; d < 60; d++) {
      const day = new Date(Date.UTC(2025, 9, 23 + d, 6)).toISOString()
      list.push(txn({ occurred_at: day, amount: 1000, direction: 'in', balance: 5000 + d }))
    }
    await publish('stale', list)
    const res = await call('stale', 'GET', '/api/v1/cashflow/summary/stale')
    expect(res.body).toMatchObject({ to: '2025-12-21', as_of: '2025-12-21', inflow: 30_000 })
    const codes = res.body.reasons.map((r: { code: string }) => r.code)
    expect(codes).not.toContain('NO_ACTIVITY')
    expect(codes).not.toContain('INFLOW_DECLINING')
    const asked = await call('stale', 'GET', '/api/v1/cashflow/summary/stale?as_of=2026-01-01')
    expect(asked.body.as_of).toBe('2026-01-01')
  })

  it('does not mark an empty tenant down', async () => {
    const res = await call('empty', 'GET', '/api/v1/cashflow/summary/empty')
    expect(res.body.reasons).toEqual([expect.objectContaining({ code: 'NO_DATA', impact: 0 })])
    expect(res.body.health_score).toBe(100)
  })
})

describe('analyze', () => {
  it('recovers a known trend and weekly seasonality', async () => {
    const effects = [-300, -100, 0, 100, 600, 900, -1200]
    const list: TransactionEvent[] = []
    for (let d = 0; d < 364; d++) {
      const weekday = (new Date(at(d)).getUTCDay() + 6) % 7
      const noise = (((d * 7919) % 101) - 50) * 4
      const net = 2000 + 5 * d + effects[weekday]! + noise
      list.push(txn({ occurred_at: at(d), amount: 3000 + net, direction: 'in' }))
      list.push(txn({ occurred_at: at(d), amount: 3000, direction: 'out', category: 'stock' }))
    }
    await publish('trendy', list)
    const res = await call('trendy', 'POST', '/api/v1/cashflow/analyze', {
      from: '2025-01-01',
      to: '2025-12-30',
    })
    expect(res.status).toBe(200)
    const { trend, seasonality } = res.body
    expect(trend.daily.slope).toBeCloseTo(5, 0)
    expect(trend.daily.significant).toBe(true)
    expect(trend.daily.direction).toBe('up')
    // 5 a day more each day: each week's total grows by 7 × 7 × 5 = 245.
    expect(Math.abs(trend.weekly.slope - 245)).toBeLessThan(10)
    expect(trend.weekly.p_value).toBeLessThan(0.001)
    expect(trend.monthly.n).toBe(11)
    expect(Math.abs(trend.monthly.slope - 5 * 30.44 ** 2)).toBeLessThan(400)
    expect(seasonality.day_of_week.significant).toBe(true)
    for (let w = 0; w < 7; w++) {
      expect(Math.abs(seasonality.day_of_week.indices[w].effect - effects[w]!)).toBeLessThan(60)
    }
    expect(seasonality.day_of_week.indices[5].day).toBe('saturday')
  })

  it('finds rent, salaries and the weekly supplier as recurring payments', async () => {
    await seedShop()
    const res = await call('shop-rec', 'POST', '/api/v1/cashflow/analyze', {})
    expect(res.status).toBe(200)
    const recurring = res.body.recurring as Array<Record<string, unknown>>
    expect(recurring).toContainEqual(
      expect.objectContaining({
        counterparty: 'Landlord Properties',
        category: 'rent',
        frequency: 'monthly',
        typical_amount: 45_000,
      }),
    )
    expect(recurring).toContainEqual(
      expect.objectContaining({ counterparty: 'Jane Wanjiru', frequency: 'monthly' }),
    )
    expect(recurring).toContainEqual(
      expect.objectContaining({ counterparty: 'Acme Supplies', frequency: 'weekly' }),
    )
    expect(recurring.some((r) => String(r.counterparty).startsWith('Customer'))).toBe(false)
    expect(res.body.drivers.inflow[0]).toMatchObject({ category: 'sales', share: 1 })
    expect(res.body.drivers.outflow.map((d: { category: string }) => d.category)).toContain('rent')
  })
})

describe('forecast', () => {
  it('beats seasonal naive on the held-out last 28 days of a synthetic year', async () => {
    await seedShop()
    const res = await call('shop-rec', 'GET', '/api/v1/cashflow/forecast?horizon=30')
    expect(res.status).toBe(200)
    expect(res.body.model).toBe('holt_winters_additive_damped')
    expect(res.body.points).toHaveLength(30)
    expect(res.body.points[0].date).toBe('2026-01-01')
    expect(res.body.backtest.holdout_days).toBe(28)
    expect(res.body.backtest.mase).toBeLessThan(1)
    expect(res.body.backtest.mase).toBeLessThan(res.body.baseline.mase)
    let width = 0
    for (const p of res.body.points) {
      expect(p.lower_95).toBeLessThanOrEqual(p.lower_80)
      expect(p.lower_80).toBeLessThanOrEqual(p.net)
      expect(p.upper_80).toBeLessThanOrEqual(p.upper_95)
      expect(p.upper_95 - p.lower_95).toBeGreaterThanOrEqual(width - 0.01)
      width = p.upper_95 - p.lower_95
    }
  })

  it('refuses a horizon outside 1..365 and says when history is too short', async () => {
    await seedShop()
    await seedEarner()
    expect((await call('shop-rec', 'GET', '/api/v1/cashflow/forecast?horizon=0')).status).toBe(422)
    expect((await call('shop-rec', 'GET', '/api/v1/cashflow/forecast?horizon=366')).status).toBe(
      422,
    )
    const short = await call('earner', 'GET', '/api/v1/cashflow/forecast')
    expect(short.status).toBe(200)
    expect(short.body).toMatchObject({ model: 'insufficient_history', points: [], backtest: null })
  })
})

describe('low balance alert', () => {
  const alerts = () =>
    kit.bus.published.filter((e) => e.type === topics.balanceLow && e.tenant_id === 'lowbal')

  it('is emitted once per crossing of the threshold', async () => {
    const put = await call('lowbal', 'PUT', '/api/v1/cashflow/settings', {
      low_balance_threshold: 10_000,
    })
    expect(put.body).toEqual({ tenant_id: 'lowbal', low_balance_threshold: 10_000 })
    const viewer = await call(
      'lowbal',
      'PUT',
      '/api/v1/cashflow/settings',
      { low_balance_threshold: 1 },
      'Viewer',
    )
    expect(viewer.status).toBe(403)
    const step = async (hour: number, balance: number) => {
      await publish('lowbal', [
        txn({
          occurred_at: `2025-12-31T${String(hour).padStart(2, '0')}:00:00Z`,
          amount: 1,
          balance,
        }),
      ])
      await kit.ctx.relay.flush()
    }
    await step(5, 20_000)
    expect(alerts()).toHaveLength(0)
    await step(6, 8_000)
    expect(alerts()).toHaveLength(1)
    expect(alerts()[0]!.data).toMatchObject({
      balance: 8_000,
      threshold: 10_000,
      reason: 'balance_below_threshold',
      forecast_date: null,
    })
    await step(7, 7_000)
    expect(alerts()).toHaveLength(1)
    await step(8, 15_000)
    await step(9, 5_000)
    expect(alerts()).toHaveLength(2)
  })

  it('alerts when the forecast projects the balance below the threshold within 7 days', async () => {
    const list: TransactionEvent[] = []
    for (let d = 0; d < 60; d++) {
      const day = new Date(Date.UTC(2025, 10, 2 + d, 6)).toISOString()
      list.push(txn({ occurred_at: day, amount: 500 + (d % 7) * 10, direction: 'in' }))
      list.push(
        txn({
          occurred_at: day,
          amount: 2500,
          direction: 'out',
          balance: 15_000 + (59 - d) * 2000,
        }),
      )
    }
    await publish('sinking', list)
    await call('sinking', 'PUT', '/api/v1/cashflow/settings', { low_balance_threshold: 5_000 })
    await kit.ctx.relay.flush()
    const sent = kit.bus.published.filter(
      (e) => e.type === topics.balanceLow && e.tenant_id === 'sinking',
    )
    expect(sent).toHaveLength(1)
    expect(sent[0]!.data).toMatchObject({ reason: 'forecast_below_threshold', threshold: 5_000 })
    expect(sent[0]!.data.forecast_date).toMatch(/^2026-01-0\d$/)
  })

  it('takes the balance the provider reports and alerts on it once', async () => {
    const shop = 'reported-bal'
    await call(shop, 'PUT', '/api/v1/cashflow/settings', { low_balance_threshold: 1_000 })
    const report = (id: string, balance: number) =>
      kit.bus.publish(topics.balanceReported, {
        id,
        type: topics.balanceReported,
        version: 1,
        tenant_id: shop,
        occurred_at: new Date().toISOString(),
        data: {
          shortcode: '600999',
          balance,
          currency: 'KES',
          reported_at: '2026-01-01T08:00:00.000Z',
          accounts: [],
        },
      })
    await report('evt_bal_1', 750)
    await report('evt_bal_1', 750)
    await kit.ctx.relay.flush()
    const low = kit.bus.published.filter(
      (e) => e.type === topics.balanceLow && e.tenant_id === shop,
    )
    expect(low).toHaveLength(1)
    expect(low[0]!.data).toMatchObject({ balance: 750, threshold: 1_000 })
    const summary = await call(shop, 'GET', `/api/v1/cashflow/summary/${shop}`)
    expect(summary.body.balance).toBe(750)
  })
})

describe('access and validation', () => {
  it('needs a token on every route', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/cashflow/summary/burner'],
      ['GET', '/api/v1/cashflow/daily'],
      ['POST', '/api/v1/cashflow/analyze'],
      ['GET', '/api/v1/cashflow/forecast'],
      ['GET', '/api/v1/cashflow/settings'],
    ] as const) {
      const res = await app.handle(new Request(`http://cashflow${path}`, { method }))
      expect(res.status).toBe(401)
    }
  })

  it('lets the platform operator read any tenant and a Viewer read its own', async () => {
    await seedBurner()
    const op = await call('platform', 'GET', '/api/v1/cashflow/summary/burner')
    expect(op.status).toBe(200)
    expect(op.body.balance).toBe(50_000)
    const daily = await call(
      'platform',
      'GET',
      '/api/v1/cashflow/daily?tenant_id=burner&from=2025-12-31&to=2025-12-31',
    )
    expect(daily.body.data[0]).toMatchObject({ inflow: 1000, outflow: 1500 })
    const viewer = await call('burner', 'GET', '/api/v1/cashflow/forecast', undefined, 'Viewer')
    expect(viewer.status).toBe(200)
  })

  it('takes an explicit summary window and refuses malformed parameters', async () => {
    await seedBurner()
    const res = await call(
      'burner',
      'GET',
      '/api/v1/cashflow/summary/burner?from=2025-12-31&to=2025-12-31',
    )
    expect(res.body).toMatchObject({ days: 1, inflow: 1000, outflow: 1500, net: -500 })
    for (const path of [
      '/api/v1/cashflow/forecast?horizon=abc',
      '/api/v1/cashflow/forecast?horizon=2.5',
      '/api/v1/cashflow/summary/burner?days=0',
      '/api/v1/cashflow/summary/burner?as_of=2025-13-01',
      '/api/v1/cashflow/daily?from=yesterday',
    ]) {
      expect((await call('burner', 'GET', path)).status).toBe(422)
    }
    const analyze = await call('burner', 'POST', '/api/v1/cashflow/analyze', {
      from: '2025-12-31',
      to: '2025-01-01',
    })
    expect(analyze.status).toBe(422)
    const negative = await call('burner', 'PUT', '/api/v1/cashflow/settings', {
      low_balance_threshold: -5,
    })
    expect(negative.status).toBe(422)
    const cents = await call('burner', 'PUT', '/api/v1/cashflow/settings', {
      low_balance_threshold: 1.234,
    })
    expect(cents.status).toBe(422)
  })
})
