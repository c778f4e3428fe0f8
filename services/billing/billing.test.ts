import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../schema/billing/migrations.ts'
import { topics } from '../../schema/events.ts'
import { plans } from '../../schema/plans.ts'
import { assertEntitled, readEntitlements } from '../kernel/entitlements.ts'
import type { CallOptions } from '../kernel/http-client.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { type Billing, createBilling } from './billing.ts'
import { subscribeBilling } from './consumers.ts'
import { addMonths, prorate } from './periods.ts'
import { seedPlans } from './plans.ts'
import { createBillingApp } from './routes.ts'
import type { BillingSettings } from './settings.ts'

type Call = { service: string; path: string; opts: CallOptions }

describe('billing periods', () => {
  it('anchors monthly periods on the start day, clamped to short months', () => {
    const anchor = new Date('2026-01-31T10:00:00Z')
    expect(addMonths(anchor, 1).toISOString()).toBe('2026-02-28T10:00:00.000Z')
    expect(addMonths(anchor, 2).toISOString()).toBe('2026-03-31T10:00:00.000Z')
    expect(addMonths(anchor, 12).toISOString()).toBe('2027-01-31T10:00:00.000Z')
  })

  it('prorates by remaining seconds to the cent, half away from zero', () => {
    const start = new Date('2026-01-01T00:00:00Z')
    const end = new Date('2026-02-01T00:00:00Z')
    const at = new Date('2026-01-11T00:00:00Z')
    expect(prorate({ fromCents: 0, toCents: 250000, start, end, at }).amountCents).toBe(169355)
    expect(prorate({ fromCents: 250000, toCents: 0, start, end, at }).amountCents).toBe(-169355)
  })
})

describe('billing service', () => {
  let kit: TestKit<BillingSettings>
  let b: Billing
  let app: ReturnType<typeof createBillingApp>
  let calls: Call[]
  let operator: Record<string, string>

  const req = async (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
  ) => {
    const res = await app.handle(
      new Request(`http://billing${path}`, {
        method,
        headers: {
          ...headers,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      }),
    )
    const text = await res.text()
    let json: any = text
    try {
      json = JSON.parse(text)
    } catch {}
    return { status: res.status, body: json, headers: res.headers }
  }

  const tenantCreated = (tenantId: string, plan: string, at: string) =>
    kit.bus.publish(topics.tenantsChanged, {
      id: `evt-${tenantId}-created`,
      type: topics.tenantsChanged,
      version: 1,
      tenant_id: tenantId,
      occurred_at: at,
      data: {
        change: 'created',
        name: `${tenantId} Ltd`,
        plan,
        isolation: 'shared',
        status: 'active',
        features: {},
        timezone: 'Africa/Nairobi',
      },
    })

  beforeEach(async () => {
    kit = await createTestKit('billing', {
      migrations,
      settings: { graceDays: 7, dueDays: 7, cycleIntervalS: 0 },
    })
    let frozen = Date.parse('2026-01-01T00:00:00Z')
    kit.ctx.clock = {
      now: () => new Date(frozen),
      nowMs: () => frozen,
      set: (at) => {
        frozen = new Date(at ?? Date.now()).getTime()
      },
      advance: (ms) => {
        frozen += ms
      },
    }
    calls = []
    kit.ctx.client = {
      async call<T>(service: string, path: string, opts: CallOptions = {}): Promise<T> {
        calls.push({ service, path, opts })
        if (service === 'payment')
          return {
            checkout_request_id: 'ws_CO_1',
            merchant_request_id: 'm1',
            status: 'pending',
          } as T
        return { id: 'acme', plan: (opts.body as { plan: string }).plan } as T
      },
    }
    b = createBilling(kit.ctx)
    seedPlans(b.db, kit.ctx.clock.now())
    await subscribeBilling(b)
    app = createBillingApp(kit.ctx, b)
    operator = await kit.authFor({ tenantId: 'platform', role: 'Admin' })
  })
  afterEach(() => kit.cleanup())

  it('lists the seeded plans and lets only the operator create one', async () => {
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const list = await req('GET', '/api/v1/billing/plans', admin)
    expect(list.status).toBe(200)
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual(['free', 'pro', 'enterprise'])
    expect(list.body.data[1]).toMatchObject({
      id: 'pro',
      price: 2500,
      currency: 'KES',
      interval: 'month',
      limits: { transactions: 50000, statements: 100, users: 20, webhook_endpoints: 10 },
      features: { advanced_analytics: true, bulk_upload: true, api_access: true },
    })
    expect(list.body.data[2].limits.transactions).toBeNull()
    expect(list.body.data.map((p: { tier: string }) => p.tier)).toEqual([
      'free',
      'pro',
      'enterprise',
    ])
    const plan = {
      id: 'growth',
      name: 'Growth',
      price: 999.5,
      limits: { transactions: 10000, statements: 20, users: 5, webhook_endpoints: 3 },
      features: { advanced_analytics: true },
    }
    expect((await req('POST', '/api/v1/billing/plans', admin, plan)).status).toBe(403)
    const created = await req('POST', '/api/v1/billing/plans', operator, plan)
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      id: 'growth',
      tier: 'pro',
      price: 999.5,
      features: { bulk_upload: false },
    })
    expect((await req('POST', '/api/v1/billing/plans', operator, plan)).status).toBe(409)
    // The tier is named, or follows the price (free when it costs nothing).
    const named = await req('POST', '/api/v1/billing/plans', operator, {
      ...plan,
      id: 'big',
      tier: 'enterprise',
    })
    expect(named.body.tier).toBe('enterprise')
    const gratis = await req('POST', '/api/v1/billing/plans', operator, {
      ...plan,
      id: 'gratis',
      price: 0,
    })
    expect(gratis.body.tier).toBe('free')
    const tiers = (await req('GET', '/api/v1/billing/plans', admin)).body.data.map(
      (p: { id: string; tier: string }) => `${p.id}:${p.tier}`,
    )
    expect(tiers).toContain('growth:pro')
    expect(tiers).toContain('big:enterprise')
    expect(tiers).toContain('gratis:free')
    const wrongTier = await req('POST', '/api/v1/billing/plans', operator, {
      ...plan,
      id: 'x3',
      tier: 'gold',
    })
    expect(wrongTier.status).toBe(422)
    const bad = await req('POST', '/api/v1/billing/plans', operator, {
      ...plan,
      id: 'x2',
      price: 1.005,
    })
    expect(bad.status).toBe(422)
  })

  it('creates a free subscription lazily and refuses another tenant', async () => {
    const viewer = await kit.authFor({ tenantId: 'acme', role: 'Viewer' })
    const res = await req('GET', '/api/v1/billing/subscriptions/acme', viewer)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      tenant_id: 'acme',
      plan: 'free',
      status: 'active',
      current_period_start: '2026-01-01T00:00:00.000Z',
      current_period_end: '2026-02-01T00:00:00.000Z',
      grace_period_ends: null,
    })
    expect((await req('GET', '/api/v1/billing/subscriptions/beta', viewer)).status).toBe(403)
    expect((await req('GET', '/api/v1/billing/subscriptions/Bad_Id', operator)).status).toBe(422)
    expect(readEntitlements(kit.registry, 'acme')).toMatchObject({ plan: 'free', status: 'active' })
  })

  it('starts a subscription made before the tenant event on the plan the profile names', async () => {
    await req('POST', '/api/v1/billing/plans', operator, {
      id: 'starter',
      name: 'Starter',
      price: 500,
      limits: { transactions: 2000, statements: 10, users: 3, webhook_endpoints: 1 },
    })
    kit.registry.setPlacement('acme', { isolation: 'schema', plan: 'starter' })
    const viewer = await kit.authFor({ tenantId: 'acme', role: 'Viewer' })
    const res = await req('GET', '/api/v1/billing/subscriptions/acme', viewer)
    expect(res.body).toMatchObject({ tenant_id: 'acme', plan: 'starter' })
    const usage = await req('GET', '/api/v1/billing/usage/acme', viewer)
    expect(usage.body.metrics.transactions.limit).toBe(2000)
    // A profile naming a plan billing does not know starts on free.
    kit.registry.setPlacement('beta', { isolation: 'shared', plan: 'nowhere' })
    const beta = await kit.authFor({ tenantId: 'beta', role: 'Viewer' })
    expect((await req('GET', '/api/v1/billing/subscriptions/beta', beta)).body.plan).toBe('free')
  })

  it('records usage once per event id and reports it against the limits', async () => {
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const body = { tenant_id: 'acme', metric: 'transactions', quantity: 400, event_id: 'e-1' }
    const first = await req('POST', '/api/v1/billing/usage/record', admin, body)
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({ duplicate: false, quantity: 400 })
    const again = await req('POST', '/api/v1/billing/usage/record', admin, { ...body, quantity: 9 })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ duplicate: true, quantity: 400 })
    await kit.bus.publish(topics.usage, {
      id: 'evt-usage-1',
      type: topics.usage,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-01-02T00:00:00Z',
      data: { metric: 'statements', quantity: 2 },
    })
    await kit.bus.publish(topics.usage, {
      id: 'evt-usage-1',
      type: topics.usage,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-01-02T00:00:00Z',
      data: { metric: 'statements', quantity: 2 },
    })
    const viewer = await kit.authFor({ tenantId: 'acme', role: 'Viewer' })
    const usage = await req('GET', '/api/v1/billing/usage/acme', viewer)
    expect(usage.body).toMatchObject({
      period_start: '2026-01-01T00:00:00.000Z',
      period_end: '2026-02-01T00:00:00.000Z',
      metrics: {
        transactions: { used: 400, limit: plans.free.limits.transactions },
        statements: { used: 2, limit: plans.free.limits.statements },
        payments: { used: 0, limit: null },
        users: { limit: plans.free.limits.users },
        webhook_endpoints: { limit: plans.free.limits.webhook_endpoints },
      },
    })
    expect(readEntitlements(kit.registry, 'acme')?.used).toMatchObject({
      transactions: 400,
      statements: 2,
    })
    expect(() =>
      assertEntitled(kit.registry, 'acme', {
        write: true,
        metric: 'transactions',
        adding: plans.free.limits.transactions! - 400 + 1,
      }),
    ).toThrow(/transactions/)
    const other = await req('POST', '/api/v1/billing/usage/record', admin, {
      ...body,
      tenant_id: 'beta',
    })
    expect(other.status).toBe(403)
  })

  it('invoices a month, then past due, suspended after grace, and active when paid', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    for (const [i, q] of [30000, 20010].entries())
      await req('POST', '/api/v1/billing/usage/record', admin, {
        tenant_id: 'acme',
        metric: 'transactions',
        quantity: q,
        event_id: `tx-${i}`,
      })
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T01:00:00Z',
    })
    expect(run.status).toBe(200)
    expect(run.body.renewed).toEqual(['acme'])
    expect(run.body.invoices).toHaveLength(1)
    const inv = (await req('GET', `/api/v1/billing/invoices/${run.body.invoices[0]}`, admin)).body
    expect(inv).toMatchObject({
      number: 'INV-000001',
      tenant_id: 'acme',
      status: 'open',
      period_start: '2026-01-01T00:00:00.000Z',
      period_end: '2026-02-01T00:00:00.000Z',
      subtotal: 2505,
      total: 2505,
      currency: 'KES',
      due_at: '2026-02-08T00:00:00.000Z',
      paid_at: null,
    })
    expect(inv.lines).toEqual([
      expect.objectContaining({ type: 'base', amount: 2500, quantity: 1 }),
      expect.objectContaining({
        type: 'overage',
        metric: 'transactions',
        quantity: 10,
        unit_amount: 0.5,
        amount: 5,
      }),
    ])
    const again = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T01:00:00Z',
    })
    expect(again.body.invoices).toEqual([])
    const sub = (await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body
    expect(sub.current_period_start).toBe('2026-02-01T00:00:00.000Z')
    expect(
      (await req('GET', '/api/v1/billing/usage/acme', admin)).body.metrics.transactions.used,
    ).toBe(0)

    const pdf = await req('GET', `/api/v1/billing/invoices/${inv.id}/pdf`, admin)
    expect(pdf.status).toBe(200)
    expect(pdf.headers.get('content-type')).toBe('application/pdf')
    expect(String(pdf.body).startsWith('%PDF')).toBe(true)

    await req('POST', '/api/v1/billing/run-cycle', operator, { at: '2026-02-08T00:00:01Z' })
    const pastDue = (await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body
    expect(pastDue).toMatchObject({
      status: 'past_due',
      grace_period_ends: '2026-02-15T00:00:00.000Z',
    })
    expect(() => assertEntitled(kit.registry, 'acme', { write: true })).not.toThrow()
    await req('POST', '/api/v1/billing/run-cycle', operator, { at: '2026-02-15T00:00:00Z' })
    expect((await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body.status).toBe(
      'suspended',
    )
    expect(() => assertEntitled(kit.registry, 'acme', { write: true })).toThrow(/suspended/)
    expect(() => assertEntitled(kit.registry, 'acme', {})).not.toThrow()

    const success = {
      id: 'evt-pay-1',
      type: topics.transactionsSuccess,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-02-16T00:00:00Z',
      data: {
        transaction_id: 'txn_1',
        occurred_at: '2026-02-16T00:00:00Z',
        amount: 2505,
        direction: 'in',
        description: 'Invoice',
        source: 'payment',
        checkout_request_id: 'ws_CO_9',
        account_reference: 'INV-000001',
      },
    }
    kit.ctx.clock.set('2026-02-16T00:00:00Z')
    await kit.bus.publish(topics.transactionsSuccess, success)
    await kit.bus.publish(topics.transactionsSuccess, success)
    const paid = (await req('GET', `/api/v1/billing/invoices/${inv.id}`, admin)).body
    expect(paid.status).toBe('paid')
    expect((await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body).toMatchObject({
      status: 'active',
      grace_period_ends: null,
    })
    expect(() => assertEntitled(kit.registry, 'acme', { write: true })).not.toThrow()
    const history = (await req('GET', '/api/v1/billing/subscriptions/acme/events', admin)).body.data
    expect(history.map((e: { reason: string }) => e.reason)).toEqual([
      'created',
      'renewed',
      'payment_overdue',
      'grace_period_ended',
      'reactivated',
    ])
    await kit.ctx.relay.flush()
    const changed = kit.bus.published.filter((e) => e.type === topics.subscriptionsChanged)
    expect(changed.map((e) => e.data.reason)).toContain('renewed')
    expect(changed.find((e) => e.data.reason === 'renewed')).toMatchObject({
      tenant_id: 'acme',
      data: { plan: 'pro', status: 'active', previous_status: 'active' },
    })
  })

  it('owns the plan: its door changes it, prorated to the cent, and tells the tenant service by event', async () => {
    await tenantCreated('acme', 'free', '2026-01-01T00:00:00Z')
    kit.ctx.clock.set('2026-01-11T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const res = await req(
      'POST',
      '/api/v1/billing/subscriptions/upgrade',
      { ...admin, 'x-request-id': 'req-upgrade-1' },
      { tenant_id: 'acme', plan: 'pro' },
    )
    expect(res.status).toBe(200)
    const proTerms = {
      tier: 'pro',
      features: { advanced_analytics: true, bulk_upload: true, api_access: true },
      users: 20,
    }
    expect(res.body).toMatchObject({
      tenant_id: 'acme',
      plan: 'pro',
      status: 'active',
      plan_revision: 2,
      plan_terms: proTerms,
    })
    // Billing no longer asks the tenant service: the tenant follows the event.
    expect(calls).toEqual([])
    await kit.ctx.relay.flush()
    const changed = kit.bus.published
      .filter((e) => e.type === topics.subscriptionsChanged)
      .map((e) => e.data)
    expect(changed).toMatchObject([
      { reason: 'created', plan: 'free', plan_revision: 1, plan_terms: { tier: 'free' } },
      { reason: 'upgraded', plan: 'pro', plan_revision: 2, plan_terms: proTerms },
    ])
    // The same plan again changes nothing and emits nothing.
    const again = await req('POST', '/api/v1/billing/subscriptions/upgrade', admin, {
      tenant_id: 'acme',
      plan: 'pro',
    })
    expect(again.body).toMatchObject({ plan: 'pro', plan_revision: 2 })
    // The tenant's `updated` event (the move billing's event caused) never changes the plan.
    await kit.bus.publish(topics.tenantsChanged, {
      id: 'evt-acme-updated',
      type: topics.tenantsChanged,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-01-11T00:00:01Z',
      data: {
        change: 'updated',
        name: 'acme Ltd',
        plan: 'free',
        isolation: 'shared',
        status: 'active',
        features: {},
        timezone: 'Africa/Nairobi',
      },
    })
    expect((await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body.plan).toBe('pro')
    expect(readEntitlements(kit.registry, 'acme')?.limits.transactions).toBe(50000)
    expect(
      (
        await req('POST', '/api/v1/billing/subscriptions/upgrade', admin, {
          tenant_id: 'acme',
          plan: 'gold',
        })
      ).status,
    ).toBe(422)
    expect(
      (
        await req('POST', '/api/v1/billing/subscriptions/upgrade', admin, {
          tenant_id: 'beta',
          plan: 'pro',
        })
      ).status,
    ).toBe(403)
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T00:00:00Z',
    })
    const inv = (await req('GET', `/api/v1/billing/invoices/${run.body.invoices[0]}`, admin)).body
    expect(inv.lines).toHaveLength(1)
    expect(inv.lines[0]).toMatchObject({ type: 'proration', amount: 1693.55 })
    expect(inv.total).toBe(1693.55)
    const history = (await req('GET', '/api/v1/billing/subscriptions/acme/events', admin)).body.data
    expect(history.filter((e: { reason: string }) => e.reason === 'upgraded')).toHaveLength(1)
    const next = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-03-01T00:00:00Z',
    })
    const second = (await req('GET', `/api/v1/billing/invoices/${next.body.invoices[0]}`, admin))
      .body
    expect(second).toMatchObject({ number: 'INV-000002', total: 2500 })
  })

  it('reports a custom plan with its terms, and keeps a plan changed before the tenant event came', async () => {
    await req('POST', '/api/v1/billing/plans', operator, {
      id: 'starter',
      name: 'Starter',
      price: 500,
      limits: { transactions: 2000, statements: 10, users: 3, webhook_endpoints: 1 },
      features: { advanced_analytics: true },
    })
    kit.registry.setPlacement('acme', { isolation: 'shared', plan: 'free' })
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const up = await req('POST', '/api/v1/billing/subscriptions/upgrade', admin, {
      tenant_id: 'acme',
      plan: 'starter',
    })
    expect(up.body).toMatchObject({
      plan: 'starter',
      plan_revision: 2,
      plan_terms: {
        tier: 'pro',
        features: { advanced_analytics: true, bulk_upload: false, api_access: false },
        users: 3,
      },
    })
    expect(readEntitlements(kit.registry, 'acme')).toMatchObject({ plan: 'starter' })
    // The tenant's `created` event, late, finds the subscription and leaves its plan alone.
    await tenantCreated('acme', 'free', '2026-01-01T00:00:00Z')
    const sub = await req('GET', '/api/v1/billing/subscriptions/acme', admin)
    expect(sub.body).toMatchObject({ plan: 'starter', tenant_id: 'acme' })
    expect(readEntitlements(kit.registry, 'acme')).toMatchObject({ plan: 'starter' })
  })

  it('carries a downgrade credit to the next invoice', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    kit.ctx.clock.set('2026-01-11T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    await req('POST', '/api/v1/billing/subscriptions/upgrade', admin, {
      tenant_id: 'acme',
      plan: 'free',
    })
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T00:00:00Z',
    })
    const inv = (await req('GET', `/api/v1/billing/invoices/${run.body.invoices[0]}`, admin)).body
    expect(inv.lines.map((l: { amount: number }) => l.amount)).toEqual([2500, -1693.55])
    expect(inv.total).toBe(806.45)
  })

  it('pays an invoice by STK push with the invoice number as account reference', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    await req('POST', '/api/v1/billing/usage/record', admin, {
      tenant_id: 'acme',
      metric: 'transactions',
      quantity: 50001,
      event_id: 'big',
    })
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T00:00:00Z',
    })
    const id = run.body.invoices[0]
    const res = await req(
      'POST',
      `/api/v1/billing/invoices/${id}/pay`,
      { ...admin, 'x-request-id': 'req-pay-1' },
      { phone_number: '254708374149' },
    )
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ checkout_request_id: 'ws_CO_1', status: 'pending' })
    expect(calls[0]).toMatchObject({
      service: 'payment',
      path: '/api/v1/payments/stkpush',
      opts: {
        method: 'POST',
        requestId: 'req-pay-1',
        body: {
          tenant_id: 'acme',
          phone_number: '254708374149',
          amount: 2501,
          account_reference: 'INV-000001',
          transaction_desc: 'Invoice',
        },
      },
    })
    await kit.bus.publish(topics.transactionsFailed, {
      id: 'evt-fail-1',
      type: topics.transactionsFailed,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-02-01T00:00:00Z',
      data: {
        checkout_request_id: 'ws_CO_1',
        status: 'cancelled',
        result_code: 1032,
        result_desc: 'Request cancelled by user',
        amount: 2501,
        phone_number: '254708374149',
        account_reference: 'INV-000001',
      },
    })
    const inv = (await req('GET', `/api/v1/billing/invoices/${id}`, admin)).body
    expect(inv.status).toBe('open')
    expect(inv.payment_attempts).toEqual([
      expect.objectContaining({
        checkout_request_id: 'ws_CO_1',
        status: 'cancelled',
        amount: 2501,
      }),
    ])
    const other = await kit.authFor({ tenantId: 'beta', role: 'Admin' })
    expect((await req('GET', `/api/v1/billing/invoices/${id}`, other)).status).toBe(404)
    expect(
      (
        await req('POST', `/api/v1/billing/invoices/${id}/pay`, other, {
          phone_number: '254708374149',
        })
      ).status,
    ).toBe(404)
    const list = await req('GET', '/api/v1/billing/invoices', admin)
    expect(list.body).toMatchObject({ has_more: false, next_cursor: null })
    expect(list.body.data.map((i: { number: string }) => i.number)).toEqual(['INV-000001'])
    expect((await req('GET', '/api/v1/billing/invoices', other)).body.data).toEqual([])
    const manager = await kit.authFor({ tenantId: 'acme', role: 'Manager' })
    expect((await req('GET', '/api/v1/billing/invoices', manager)).status).toBe(403)
  })

  it('voids an overdue invoice for the operator only and reactivates the tenant', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-20T00:00:00Z',
    })
    expect(run.body).toMatchObject({ past_due: ['acme'], suspended: ['acme'] })
    const id = run.body.invoices[0]
    expect((await req('POST', `/api/v1/billing/invoices/${id}/void`, admin)).status).toBe(403)
    const voided = await req('POST', `/api/v1/billing/invoices/${id}/void`, operator)
    expect(voided.body).toMatchObject({ status: 'void' })
    expect((await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body.status).toBe(
      'active',
    )
    expect(
      (
        await req('POST', `/api/v1/billing/invoices/${id}/pay`, admin, {
          phone_number: '254708374149',
        })
      ).status,
    ).toBe(409)
  })

  it('marks an invoice paid from the checkout id of its STK push', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T00:00:00Z',
    })
    const id = run.body.invoices[0]
    await req('POST', `/api/v1/billing/invoices/${id}/pay`, admin, { phone_number: '254708374149' })
    const event = (tenant: string, amount: number, eventId: string) => ({
      id: eventId,
      type: topics.transactionsSuccess,
      version: 1,
      tenant_id: tenant,
      occurred_at: '2026-02-02T00:00:00Z',
      data: {
        transaction_id: 'txn_2',
        occurred_at: '2026-02-02T00:00:00Z',
        amount,
        direction: 'in',
        description: 'Invoice',
        source: 'payment',
        checkout_request_id: 'ws_CO_1',
        account_reference: 'ACME',
        // The payment service says so for a payment billing started.
        purpose: 'invoice',
      },
    })
    await kit.bus.publish(topics.transactionsSuccess, event('beta', 2500, 'evt-other-tenant'))
    await kit.bus.publish(topics.transactionsSuccess, event('acme', 100, 'evt-short'))
    expect((await req('GET', `/api/v1/billing/invoices/${id}`, admin)).body.status).toBe('open')
    await kit.bus.publish(topics.transactionsSuccess, event('acme', 2500, 'evt-full'))
    const inv = (await req('GET', `/api/v1/billing/invoices/${id}`, admin)).body
    expect(inv.status).toBe('paid')
    expect(inv.payment_attempts[0]).toMatchObject({
      checkout_request_id: 'ws_CO_1',
      status: 'success',
    })
  })

  it('cancels the subscription of a deleted tenant and stops billing it', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    await kit.bus.publish(topics.tenantsChanged, {
      id: 'evt-acme-deleted',
      type: topics.tenantsChanged,
      version: 1,
      tenant_id: 'acme',
      occurred_at: '2026-01-05T00:00:00Z',
      data: {
        change: 'deleted',
        name: 'acme Ltd',
        plan: 'pro',
        isolation: 'shared',
        status: 'deleted',
        features: {},
        timezone: 'Africa/Nairobi',
      },
    })
    const admin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    expect((await req('GET', '/api/v1/billing/subscriptions/acme', admin)).body.status).toBe(
      'canceled',
    )
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-03-01T00:00:00Z',
    })
    expect(run.body.invoices).toEqual([])
    // The tenant is gone: its entitlements file is removed rather than rewritten.
    expect(existsSync(join(kit.registry.tenantDir('acme'), 'entitlements.json'))).toBe(false)
  })

  it('runs every route through the security suite: no token, wrong role, other tenant', async () => {
    await tenantCreated('acme', 'pro', '2026-01-01T00:00:00Z')
    const run = await req('POST', '/api/v1/billing/run-cycle', operator, {
      at: '2026-02-01T00:00:00Z',
    })
    const inv = run.body.invoices[0]
    const routes: Array<{
      method: string
      path: string
      body?: unknown
      role: string
      other?: number
    }> = [
      { method: 'GET', path: '/api/v1/billing/plans', role: 'read' },
      {
        method: 'POST',
        path: '/api/v1/billing/plans',
        role: 'operator',
        body: {
          name: 'X',
          price: 1,
          limits: { transactions: 1, statements: 1, users: 1, webhook_endpoints: 1 },
        },
      },
      { method: 'GET', path: '/api/v1/billing/subscriptions/acme', role: 'read', other: 403 },
      {
        method: 'GET',
        path: '/api/v1/billing/subscriptions/acme/events',
        role: 'read',
        other: 403,
      },
      {
        method: 'POST',
        path: '/api/v1/billing/subscriptions/upgrade',
        role: 'admin',
        body: { tenant_id: 'acme', plan: 'enterprise' },
        other: 403,
      },
      {
        method: 'POST',
        path: '/api/v1/billing/usage/record',
        role: 'admin',
        body: { tenant_id: 'acme', metric: 'payments', quantity: 1, event_id: 's-1' },
        other: 403,
      },
      { method: 'GET', path: '/api/v1/billing/usage/acme', role: 'read', other: 403 },
      { method: 'GET', path: '/api/v1/billing/invoices', role: 'admin' },
      { method: 'GET', path: `/api/v1/billing/invoices/${inv}`, role: 'admin', other: 404 },
      { method: 'GET', path: `/api/v1/billing/invoices/${inv}/pdf`, role: 'admin', other: 404 },
      {
        method: 'POST',
        path: `/api/v1/billing/invoices/${inv}/pay`,
        role: 'admin',
        body: { phone_number: '254708374149' },
        other: 404,
      },
      { method: 'POST', path: `/api/v1/billing/invoices/${inv}/void`, role: 'operator' },
      { method: 'POST', path: '/api/v1/billing/run-cycle', role: 'operator', body: {} },
    ]
    const viewer = await kit.authFor({ tenantId: 'acme', role: 'Viewer' })
    const acmeAdmin = await kit.authFor({ tenantId: 'acme', role: 'Admin' })
    const betaAdmin = await kit.authFor({ tenantId: 'beta', role: 'Admin' })
    for (const r of routes) {
      const label = `${r.method} ${r.path}`
      const anon = await req(r.method, r.path, {}, r.body)
      expect([label, anon.status]).toEqual([label, 401])
      const spoofed = await req(r.method, r.path, { ...viewer, 'x-tenant-id': 'beta' }, r.body)
      expect([label, spoofed.status]).toEqual([label, 403])
      if (r.role === 'admin' || r.role === 'operator') {
        const weak = await req(r.method, r.path, viewer, r.body)
        expect([label, weak.status]).toEqual([label, 403])
      }
      if (r.role === 'operator') {
        const admin = await req(r.method, r.path, acmeAdmin, r.body)
        expect([label, admin.status]).toEqual([label, 403])
      }
      if (r.other) {
        const other = await req(r.method, r.path, betaAdmin, r.body)
        expect([label, other.status]).toEqual([label, r.other])
      }
    }
    expect(calls).toEqual([])
  })
})
