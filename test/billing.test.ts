import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { migrationsOf } from '../daemon/migrations.ts'
import { topics } from '../schema/events.ts'
import { assertEntitled } from '../services/kernel/entitlements.ts'
import { createRegistry } from '../tenants/registry.ts'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'

const root = join(import.meta.dir, '..')
const DAY = 86_400_000

function pdfText(pdf: Uint8Array, dir: string): string {
  if (!Bun.which('pdftotext'))
    throw new Error(
      'pdftotext is not installed (apt-get install poppler-utils); cannot check the PDF',
    )
  const file = join(dir, `invoice-${Date.now()}.pdf`)
  writeFileSync(file, pdf)
  const out = Bun.spawnSync(['pdftotext', '-layout', file, '-'])
  if (out.exitCode !== 0) throw new Error(`pdftotext failed: ${out.stderr.toString()}`)
  return out.stdout.toString()
}

describe('billing end to end', () => {
  let p: TestPlatform
  let operator: string
  let broker: MqttClient
  const publish = (
    topic: string,
    tenantId: string,
    id: string,
    data: Record<string, unknown>,
    occurredAt = new Date(),
  ) =>
    broker.publishAsync(
      topic,
      JSON.stringify({
        id,
        type: topic,
        version: 1,
        tenant_id: tenantId,
        occurred_at: occurredAt.toISOString(),
        data,
      }),
      { qos: 1 },
    )
  const tenantEvent = (
    tenantId: string,
    id: string,
    change: string,
    plan: string,
    occurredAt?: Date,
  ) => {
    // This test plays the tenant service: it writes the tenant's profile before announcing it.
    if (change === 'created') {
      mkdirSync(join(p.dataDir, 'tenants', tenantId), { recursive: true })
      writeFileSync(
        join(p.dataDir, 'tenants', tenantId, 'placement.json'),
        JSON.stringify({ isolation: 'shared', plan }),
      )
    }
    return publish(
      topics.tenantsChanged,
      tenantId,
      id,
      {
        change,
        name: `${tenantId.toUpperCase()} Traders`,
        plan,
        isolation: 'shared',
        status: 'active',
        features: {},
        timezone: 'Africa/Nairobi',
      },
      occurredAt,
    )
  }
  const entitlementsFile = (tenantId: string) =>
    join(p.dataDir, 'tenants', tenantId, 'entitlements.json')
  const entitlements = (tenantId: string) => {
    try {
      return JSON.parse(readFileSync(entitlementsFile(tenantId), 'utf8'))
    } catch {
      return null
    }
  }
  const runCycle = async (at: string) => {
    const res = await api(p.gateway, operator).post('/api/v1/billing/run-cycle', { at })
    expect(res.status).toBe(200)
    return res.body
  }

  /** A tenant announced as the tenant service would, and its first Admin: a client of it. */
  const makeTenant = async (tenantId: string, plan: string, createdAt?: Date) => {
    await tenantEvent(tenantId, `evt-${tenantId}-created`, 'created', plan, createdAt)
    await eventually(async () => entitlements(tenantId), 10_000, `${tenantId}'s subscription`)
    const made = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: tenantId,
      email: `admin@${tenantId}.test`,
      role: 'Admin',
      password: `${tenantId}-admin-password`,
    })
    expect(made.status).toBe(201)
    return api(p.gateway, await p.login(`admin@${tenantId}.test`, `${tenantId}-admin-password`))
  }
  /**
   * A free tenant created twelve hours ago (so an upgrade now falls in the middle of its period),
   * upgraded to Pro through billing's door: its period before and its subscription's history.
   */
  const upgradedMidPeriod = async (tenantId: string) => {
    const createdAt = new Date(Date.now() - 12 * 3600_000)
    const tenant = await makeTenant(tenantId, 'free', createdAt)
    const before = (await tenant.get(`/api/v1/billing/subscriptions/${tenantId}`)).body
    expect(before).toMatchObject({ plan: 'free', current_period_start: createdAt.toISOString() })
    const door = await tenant.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: tenantId,
      plan: 'pro',
    })
    expect(door.status).toBe(200)
    const history = (await tenant.get(`/api/v1/billing/subscriptions/${tenantId}/events`)).body
      .data as Array<{ reason: string; occurred_at: string }>
    return { tenant, before, door, history }
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,billing,broker' })
    operator = await p.login()
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    broker = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `billing-e2e-${Date.now()}`,
    })
    await makeTenant('zeta', 'free')
  }, 30_000)

  afterAll(async () => {
    await broker?.endAsync()
    await p?.dispose()
  })

  it('refuses a plan from a tenant Admin and accepts it from the operator', async () => {
    const admin = await p.login('admin@zeta.test', 'zeta-admin-password')
    const plan = {
      id: 'growth',
      name: 'Growth',
      price: 1200,
      limits: { transactions: 20000, statements: 50, users: 10, webhook_endpoints: 5 },
      features: { advanced_analytics: true, bulk_upload: true, api_access: true },
    }
    const denied = await api(p.gateway, admin).post('/api/v1/billing/plans', plan)
    expect(denied.status).toBe(403)
    expect(denied.headers.get('content-type')).toContain('application/problem+json')
    const created = await api(p.gateway, operator).post('/api/v1/billing/plans', plan)
    expect(created.status).toBe(201)
    const list = await api(p.gateway, admin).get('/api/v1/billing/plans')
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([
      'free',
      'growth',
      'pro',
      'enterprise',
    ])
  })

  it('upgrades mid-period through its door, once, and tells the tenant service by event', async () => {
    const heard: Array<{ tenant_id: string; data: Record<string, unknown> }> = []
    await broker.subscribeAsync(topics.subscriptionsChanged, { qos: 1 })
    broker.on('message', (topic, payload) => {
      if (topic === topics.subscriptionsChanged) heard.push(JSON.parse(payload.toString()))
    })
    const { tenant, before, door } = await upgradedMidPeriod('kilo')
    expect(door.status).toBe(200)
    const proTerms = {
      tier: 'pro',
      features: { advanced_analytics: true, bulk_upload: true, api_access: true },
      users: 20,
    }
    expect(door.body).toMatchObject({ plan: 'pro', plan_revision: 2, plan_terms: proTerms })
    const again = await tenant.post('/api/v1/billing/subscriptions/upgrade', {
      tenant_id: 'kilo',
      plan: 'pro',
    })
    expect(again.body).toMatchObject({ plan: 'pro', plan_revision: 2 })
    // The tenant service's own events (a rename, the move it made) never change the plan.
    await tenantEvent('kilo', 'evt-kilo-renamed', 'updated', 'free')
    await eventually(
      async () => entitlements('kilo')?.limits.transactions === 50000,
      10_000,
      'pro limits in the entitlements',
    )
    const upgraded = await eventually(
      async () => heard.find((e) => e.tenant_id === 'kilo' && e.data.reason === 'upgraded'),
      10_000,
      'subscriptions.changed for the upgrade',
    )
    // What the tenant service applies: the plan, its terms and its revision.
    expect(upgraded.data).toMatchObject({
      plan: 'pro',
      previous_plan: 'free',
      plan_revision: 2,
      plan_terms: proTerms,
    })
    const history = (await tenant.get('/api/v1/billing/subscriptions/kilo/events')).body.data
    expect(history.map((e: { reason: string }) => e.reason)).toEqual(['created', 'upgraded'])
    expect((await tenant.get('/api/v1/billing/subscriptions/kilo')).body.plan).toBe('pro')
    const { remaining, periodSeconds, cents } = proration(before, history[1].occurred_at)
    expect(remaining).toBeLessThan(periodSeconds - 11 * 3600)
    expect(cents).toBeLessThan(250000)
  })

  it('bills a month: usage without duplicates, invoice lines and totals, PDF, overdue, suspension, payment', async () => {
    const tenant = await makeTenant('acme', 'pro')
    const admin = await p.login('admin@acme.test', 'acme-admin-password')
    const sub = (await tenant.get('/api/v1/billing/subscriptions/acme')).body
    expect(sub).toMatchObject({
      tenant_id: 'acme',
      plan: 'pro',
      status: 'active',
      grace_period_ends: null,
    })
    const start = Date.parse(sub.current_period_start)
    expect(Math.abs(start - Date.now())).toBeLessThan(60_000)
    const end = new Date(start)
    end.setUTCMonth(end.getUTCMonth() + 1)
    if (end.getUTCDate() === new Date(start).getUTCDate())
      expect(sub.current_period_end).toBe(end.toISOString())

    const record = (event_id: string, metric: string, quantity: number) =>
      tenant.post('/api/v1/billing/usage/record', { tenant_id: 'acme', metric, quantity, event_id })
    expect((await record('batch-1', 'transactions', 30000)).status).toBe(201)
    expect((await record('batch-2', 'transactions', 20007)).status).toBe(201)
    const dup = await record('batch-2', 'transactions', 20007)
    expect(dup.status).toBe(200)
    expect(dup.body.duplicate).toBe(true)
    await publish(topics.usage, 'acme', 'evt-usage-st-1', { metric: 'statements', quantity: 3 })
    await publish(topics.usage, 'acme', 'evt-usage-st-1', { metric: 'statements', quantity: 3 })
    await publish(topics.usage, 'acme', 'evt-usage-pay-1', { metric: 'payments', quantity: 4 })
    const usage = await eventually(
      async () => {
        const u = (await tenant.get('/api/v1/billing/usage/acme')).body
        return u.metrics.payments.used === 4 ? u : null
      },
      10_000,
      'usage events',
    )
    expect(usage.metrics).toMatchObject({
      transactions: { used: 50007, limit: 50000 },
      statements: { used: 3, limit: 100 },
      users: { limit: 20 },
      webhook_endpoints: { limit: 10 },
    })
    expect(entitlements('acme').used).toMatchObject({ transactions: 50007, statements: 3 })

    // The period ends: the CLI runs the cycle an hour later.
    const at = new Date(new Date(sub.current_period_end).getTime() + 3600_000).toISOString()
    const cli = Bun.spawnSync(
      [
        process.execPath,
        join(root, 'cmd/main.ts'),
        'billing',
        'run-cycle',
        '--at',
        at,
        '--yes',
        '--json',
        '--url',
        p.gateway,
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_PORT_OFFSET: String(p.offset),
          MMP_OPERATOR_EMAIL: OPERATOR.email,
          MMP_OPERATOR_PASSWORD: OPERATOR.password,
        },
      },
    )
    expect(cli.exitCode).toBe(0)
    const report = JSON.parse(cli.stdout.toString())
    // The cycle covers every tenant whose period ended; those of other tests too.
    expect(report.renewed).toContain('acme')

    const list = (await tenant.get('/api/v1/billing/invoices')).body
    expect(list.data).toHaveLength(1)
    const inv = list.data[0]
    expect(inv.number).toMatch(/^INV-\d{6}$/)
    expect(inv).toMatchObject({
      tenant_id: 'acme',
      status: 'open',
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
      subtotal: 2503.5,
      total: 2503.5,
      currency: 'KES',
      paid_at: null,
      due_at: new Date(new Date(sub.current_period_end).getTime() + 7 * DAY).toISOString(),
    })
    expect(inv.lines).toEqual([
      expect.objectContaining({ type: 'base', quantity: 1, unit_amount: 2500, amount: 2500 }),
      expect.objectContaining({
        type: 'overage',
        metric: 'transactions',
        quantity: 7,
        unit_amount: 0.5,
        amount: 3.5,
      }),
    ])
    const renewed = (await tenant.get('/api/v1/billing/subscriptions/acme')).body
    expect(renewed.current_period_start).toBe(sub.current_period_end)
    expect((await tenant.get('/api/v1/billing/usage/acme')).body.metrics.transactions.used).toBe(0)

    const pdfRes = await fetch(`${p.gateway}/api/v1/billing/invoices/${inv.id}/pdf`, {
      headers: { authorization: `Bearer ${admin}` },
    })
    expect(pdfRes.status).toBe(200)
    expect(pdfRes.headers.get('content-type')).toBe('application/pdf')
    const text = pdfText(new Uint8Array(await pdfRes.arrayBuffer()), p.dataDir)
    expect(text).toContain('INVOICE')
    expect(text).toContain(inv.number)
    expect(text).toContain('ACME Traders')
    expect(text).toContain('Pro plan')
    expect(text).toContain('KES 2,500.00')
    expect(text).toContain('transactions over the limit of 50000')
    expect(text).toContain('KES 3.50')
    expect(text).toMatch(/Total due\s+KES 2,503.50/)
    expect(text).toContain(sub.current_period_end.slice(0, 10))

    const other = await p.login('admin@zeta.test', 'zeta-admin-password')
    expect((await api(p.gateway, other).get(`/api/v1/billing/invoices/${inv.id}`)).status).toBe(404)

    // Unpaid past the due date, then past the grace period.
    await runCycle(new Date(new Date(inv.due_at).getTime() + 1000).toISOString())
    const pastDue = (await tenant.get('/api/v1/billing/subscriptions/acme')).body
    expect(pastDue).toMatchObject({
      status: 'past_due',
      grace_period_ends: new Date(new Date(inv.due_at).getTime() + 7 * DAY).toISOString(),
    })
    expect((await tenant.get(`/api/v1/billing/invoices/${inv.id}`)).body.status).toBe('past_due')
    const graceReport = await runCycle(pastDue.grace_period_ends)
    expect(graceReport.suspended).toContain('acme')
    expect((await tenant.get('/api/v1/billing/subscriptions/acme')).body.status).toBe('suspended')

    // Other services answer writes with 402 through the shared check and billing's file; reads pass.
    const registry = createRegistry({ dataDir: p.dataDir, migrations: migrationsOf })
    let refused: unknown = null
    try {
      assertEntitled(registry, 'acme', { write: true })
    } catch (err) {
      refused = err
    }
    expect(refused).toMatchObject({ code: 'SUBSCRIPTION_SUSPENDED', status: 402 })
    expect(() => assertEntitled(registry, 'acme', { write: false })).not.toThrow()
    expect((await tenant.get('/api/v1/billing/usage/acme')).status).toBe(200)

    // Paid through M-Pesa: the payment service's success event names the invoice number.
    await publish(topics.transactionsSuccess, 'acme', 'evt-pay-ok-1', {
      transaction_id: 'txn_e2e_1',
      occurred_at: new Date().toISOString(),
      amount: 2504,
      direction: 'in',
      description: 'Invoice',
      source: 'payment',
      checkout_request_id: 'ws_CO_e2e_1',
      account_reference: inv.number,
    })
    await eventually(
      async () => {
        const s = (await tenant.get('/api/v1/billing/subscriptions/acme')).body
        return s.status === 'active' ? s : null
      },
      10_000,
      'the invoice paid',
    )
    const paid = (await tenant.get(`/api/v1/billing/invoices/${inv.id}`)).body
    expect(paid.status).toBe('paid')
    expect(paid.paid_at).not.toBeNull()
    // The kernel caches the file for a second per process: poll the shared check itself.
    await eventually(
      async () => {
        try {
          assertEntitled(registry, 'acme', { write: true })
          return true
        } catch {
          return false
        }
      },
      10_000,
      'writes allowed again',
    )
    expect(entitlements('acme').status).toBe('active')

    const history = (await tenant.get('/api/v1/billing/subscriptions/acme/events')).body.data
    expect(history.map((e: { reason: string }) => e.reason)).toEqual([
      'created',
      'renewed',
      'payment_overdue',
      'grace_period_ended',
      'reactivated',
    ])
  }, 30_000)

  it('puts the mid-period upgrade on the next invoice, prorated to the cent', async () => {
    const { tenant, before, history } = await upgradedMidPeriod('lima')
    expect(history.map((e) => e.reason)).toEqual(['created', 'upgraded'])
    const { cents } = proration(before, history[1]!.occurred_at)
    // The period ends: its cycle, an hour later, is before any tenant made at the start of the
    // run reaches the end of its first period.
    await runCycle(new Date(Date.parse(before.current_period_end) + 3600_000).toISOString())
    const inv = (await tenant.get('/api/v1/billing/invoices')).body.data.find(
      (i: { period_start: string }) => i.period_start === before.current_period_start,
    )
    expect(inv.lines).toEqual([
      expect.objectContaining({ type: 'proration', quantity: 1, amount: cents / 100 }),
    ])
    expect(inv).toMatchObject({
      plan: 'pro',
      subtotal: cents / 100,
      total: cents / 100,
      status: 'open',
    })
    expect(inv.number).toMatch(/^INV-\d{6}$/)
    const next = (await tenant.get('/api/v1/billing/subscriptions/lima')).body
    expect(next).toMatchObject({ plan: 'pro', current_period_start: inv.period_end })
  })
})

/** What the rest of a period on Pro (KES 2,500 a month) costs, from the upgrade's time. */
function proration(
  period: { current_period_start: string; current_period_end: string },
  at: string,
) {
  const start = Date.parse(period.current_period_start)
  const end = Date.parse(period.current_period_end)
  const periodSeconds = Math.floor((end - start) / 1000)
  const remaining = Math.floor((end - Date.parse(at)) / 1000)
  return { remaining, periodSeconds, cents: Math.round((250000 * remaining) / periodSeconds) }
}
