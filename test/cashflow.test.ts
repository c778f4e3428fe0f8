import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { type TransactionEvent, topics } from '../schema/events.ts'
import { syntheticBusiness } from './cashflow-fixtures.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const DAY = 86_400_000
const nairobiDay = (ms: number) => new Date(ms + 3 * 3_600_000).toISOString().slice(0, 10)

describe('cashflow end to end', () => {
  let p: TestPlatform
  let broker: MqttClient
  let alpha: string
  let beta: string
  /** The low-balance test's own tenant: cf-beta stays empty for the isolation test. */
  let gamma: string
  let seq = 0
  const lowAlerts: Array<{ tenant_id: string; data: Record<string, unknown> }> = []
  // 120 days of a shop ending yesterday (Nairobi), so the last 30 days are inside the summary.
  const start = nairobiDay(Date.now() - 120 * DAY)
  const biz = syntheticBusiness({ start, days: 120, idPrefix: 'txn_e2e', seed: 7 })

  const publish = async (tenantId: string, transactions: TransactionEvent[], id?: string) => {
    await broker.publishAsync(
      topics.transactionsCategorized,
      JSON.stringify({
        id: id ?? `evt_e2e_${++seq}`,
        type: topics.transactionsCategorized,
        version: 1,
        tenant_id: tenantId,
        occurred_at: new Date().toISOString(),
        data: { transactions },
      }),
      { qos: 1 },
    )
  }

  const userToken = async (operator: string, tenantId: string) => {
    const email = `admin@${tenantId}.test`
    const created = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: tenantId,
      email,
      role: 'Admin',
      password: 'tenant-password-1',
    })
    expect(created.status).toBe(201)
    return p.login(email, 'tenant-password-1')
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,cashflow,broker' })
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    broker = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `cashflow-e2e-${p.offset}`,
    })
    broker.on('message', (_topic, payload) => lowAlerts.push(JSON.parse(payload.toString())))
    await broker.subscribeAsync(topics.balanceLow, { qos: 1 })
    const operator = await p.login()
    await createTenants(p.gateway, operator, 'cf-alpha', 'cf-beta', 'cf-gamma')
    alpha = await userToken(operator, 'cf-alpha')
    beta = await userToken(operator, 'cf-beta')
    gamma = await userToken(operator, 'cf-gamma')
    for (let i = 0; i < biz.transactions.length; i += 500) {
      await publish('cf-alpha', biz.transactions.slice(i, i + 500), `evt_e2e_batch_${i}`)
    }
    // A redelivered batch changes nothing.
    await publish('cf-alpha', biz.transactions.slice(0, 500), 'evt_e2e_batch_0')
    const last = biz.transactions[biz.transactions.length - 1]!
    await eventually(
      async () => {
        const res = await api(p.gateway, alpha).get(
          `/api/v1/cashflow/summary/cf-alpha?days=1&as_of=${last.occurred_at.slice(0, 10)}`,
        )
        return res.body?.balance === biz.finalBalance
      },
      15_000,
      'the last transaction in the daily series',
    )
  }, 60_000)
  afterAll(async () => {
    await broker?.endAsync()
    await p?.dispose()
  })

  it('serves the daily series with every day filled', async () => {
    const to = nairobiDay(Date.now() - DAY)
    const from = nairobiDay(Date.now() - 30 * DAY)
    const res = await api(p.gateway, alpha).get(`/api/v1/cashflow/daily?from=${from}&to=${to}`)
    expect(res.status).toBe(200)
    expect(res.body.data).toHaveLength(30)
    for (const d of res.body.data) {
      expect(Math.round(d.net * 100)).toBe(biz.netByDay.get(d.date) ?? 0)
      expect(Object.keys(d.categories)).toContain('sales')
    }
  })

  it('summarizes the last 30 days with the hand-computed burn rate and runway', async () => {
    // The shop's data ends yesterday, so the 30-day window is anchored there (`as_of`), not at
    // an empty today.
    let net = 0
    for (let i = 1; i <= 30; i++) net += biz.netByDay.get(nairobiDay(Date.now() - i * DAY)) ?? 0
    const res = await api(p.gateway, alpha).get('/api/v1/cashflow/summary/cf-alpha')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      tenant_id: 'cf-alpha',
      balance: biz.finalBalance,
      as_of: nairobiDay(Date.now() - DAY),
    })
    expect(Math.round(res.body.net * 100)).toBe(net)
    const burn = Math.max(0, -net / 30) / 100
    expect(res.body.burn_rate).toBeCloseTo(burn, 2)
    if (burn > 0) expect(res.body.runway_days).toBeCloseTo(biz.finalBalance / burn, 0)
    else expect(res.body.runway_days).toBeNull()
    expect(res.body.health_score).toBeGreaterThanOrEqual(0)
    expect(res.body.health_score).toBeLessThanOrEqual(100)
  })

  it('forecasts with a model that beats seasonal naive on its own history', async () => {
    const res = await api(p.gateway, alpha).get('/api/v1/cashflow/forecast?horizon=14')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ horizon: 14, model: 'holt_winters_additive_damped' })
    expect(res.body.points).toHaveLength(14)
    expect(res.body.backtest.mase).toBeLessThan(res.body.baseline.mase)
    const bad = await api(p.gateway, alpha).get('/api/v1/cashflow/forecast?horizon=400')
    expect(bad.status).toBe(422)
  })

  it('analyzes trends and finds the rent', async () => {
    const res = await api(p.gateway, alpha).post('/api/v1/cashflow/analyze', {})
    expect(res.status).toBe(200)
    expect(res.body.trend.weekly.n).toBeGreaterThan(10)
    expect(res.body.seasonality.day_of_week.indices).toHaveLength(7)
    expect(res.body.recurring).toContainEqual(
      expect.objectContaining({ counterparty: 'Landlord Properties', frequency: 'monthly' }),
    )
  })

  it('keeps another tenant out', async () => {
    const peek = await api(p.gateway, beta).get('/api/v1/cashflow/summary/cf-alpha')
    expect(peek.status).toBe(403)
    const own = await api(p.gateway, beta).get('/api/v1/cashflow/summary/cf-beta')
    expect(own.body).toMatchObject({ inflow: 0, outflow: 0, balance: null })
    const none = await api(p.gateway).get('/api/v1/cashflow/summary/cf-beta')
    expect(none.status).toBe(401)
  })

  it('emits mobilemoney.balance.low once per crossing of the threshold', async () => {
    const set = await api(p.gateway, gamma).put('/api/v1/cashflow/settings', {
      low_balance_threshold: 1000,
    })
    expect(set.status).toBe(200)
    const step = async (minute: number, balance: number) => {
      const occurred = new Date(Date.now() - 2 * 3_600_000 + minute * 60_000).toISOString()
      await publish('cf-gamma', [
        {
          transaction_id: `txn_gamma_${minute}`,
          occurred_at: occurred,
          amount: 10,
          direction: 'out',
          description: 'Till payment',
          source: 'sms',
          category: 'inventory',
          balance,
        },
      ])
      await eventually(
        async () => {
          const res = await api(p.gateway, gamma).get('/api/v1/cashflow/summary/cf-gamma')
          return res.body.balance === balance
        },
        15_000,
        'the balance to be applied',
      )
    }
    const mine = () => lowAlerts.filter((e) => e.tenant_id === 'cf-gamma')
    await step(1, 5000)
    await step(2, 900)
    await eventually(async () => mine().length === 1, 15_000, 'the first alert')
    expect(mine()[0]!.data).toMatchObject({
      balance: 900,
      threshold: 1000,
      reason: 'balance_below_threshold',
    })
    await step(3, 800)
    await step(4, 2000)
    await step(5, 700)
    await eventually(async () => mine().length >= 2, 15_000, 'the second alert')
    expect(mine()).toHaveLength(2)
    expect(mine()[1]!.data).toMatchObject({ balance: 700 })
  })
})
