import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import fc from 'fast-check'
import { migrations } from '../../schema/billing/migrations.ts'
import { invoices } from '../../schema/billing/tables.ts'
import { topics } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { type Billing, createBilling } from './billing.ts'
import { subscribeBilling } from './consumers.ts'
import { runCycle } from './cycle.ts'
import { createPlan, seedPlans } from './plans.ts'
import type { BillingSettings } from './settings.ts'
import { changePlan, findSubscription } from './subscriptions.ts'
import { recordUsage, usedIn } from './usage.ts'

/**
 * Model tests of billing's money invariants: fast-check draws sequences of events (repeated,
 * reordered, mixed) and a few lines of model say what must come out.
 */
const START = Date.parse('2026-01-01T00:00:00Z')
const END = Date.parse('2026-02-01T00:00:00Z')
const PERIOD_S = (END - START) / 1000
const RUNS = { numRuns: 40 }

let kit: TestKit<BillingSettings>
let b: Billing
let now = START
let tenants = 0

beforeAll(async () => {
  kit = await createTestKit('billing', {
    migrations,
    settings: { graceDays: 7, dueDays: 7, cycleIntervalS: 0 },
  })
  kit.ctx.clock = {
    now: () => new Date(now),
    nowMs: () => now,
    set: (at) => {
      now = new Date(at ?? Date.now()).getTime()
    },
    advance: (ms) => {
      now += ms
    },
  }
  kit.ctx.client = {
    call: async () => {
      throw new Error('billing called another service in a model test')
    },
  }
  b = createBilling(kit.ctx)
  seedPlans(b.db, new Date(START))
  // An odd price, so prorations round.
  createPlan(
    b.db,
    {
      id: 'odd',
      name: 'Odd',
      price: 999.99,
      limits: { transactions: null, statements: null, users: null, webhook_endpoints: null },
      features: {},
    },
    new Date(START),
  )
  await subscribeBilling(b)
})
afterAll(() => kit.cleanup())

/** A tenant of its own per run, subscribed on `plan` from the start of January 2026. */
async function newTenant(plan: string): Promise<string> {
  const tenantId = `model-${++tenants}`
  now = START
  await kit.bus.publish(topics.tenantsChanged, {
    id: `evt-${tenantId}-created`,
    type: topics.tenantsChanged,
    version: 1,
    tenant_id: tenantId,
    occurred_at: new Date(START).toISOString(),
    data: {
      change: 'created',
      name: tenantId,
      plan,
      isolation: 'shared',
      status: 'active',
      features: {},
      timezone: 'Africa/Nairobi',
    },
  })
  return tenantId
}

const invoiceRow = (id: string) =>
  b.db.orm.select().from(invoices).where(eq(invoices.id, id)).get()!
const cents = (major: number) => Math.round(major * 100)

describe('billing model: an invoice is paid once', () => {
  it('keeps the first sufficient payment whatever repeats, reorders and short payments follow', async () => {
    const delivery = fc.record({
      event: fc.integer({ min: 0, max: 5 }),
      gapMs: fc.integer({ min: 1, max: 3_600_000 }),
    })
    const amounts = fc.array(fc.constantFrom(100, 2499, 2500, 2600), {
      minLength: 6,
      maxLength: 6,
    })
    await fc.assert(
      fc.asyncProperty(amounts, fc.array(delivery, { maxLength: 20 }), async (amount, sent) => {
        const tenantId = await newTenant('pro')
        const [invoiceId] = runCycle(b, new Date(END)).invoices.filter(
          (id) => invoiceRow(id).tenantId === tenantId,
        )
        const inv = invoiceRow(invoiceId!)
        expect(inv.totalCents).toBe(250000)
        now = END
        let firstPaidAt: string | null = null
        for (const d of sent) {
          now += d.gapMs
          const shillings = amount[d.event]!
          if (firstPaidAt === null && shillings * 100 >= inv.totalCents)
            firstPaidAt = new Date(now).toISOString()
          await kit.bus.publish(topics.transactionsSuccess, {
            id: `evt-${tenantId}-pay-${d.event}`,
            type: topics.transactionsSuccess,
            version: 1,
            tenant_id: tenantId,
            occurred_at: new Date(now).toISOString(),
            data: {
              transaction_id: `txn_${tenantId}_${d.event}`,
              occurred_at: new Date(now).toISOString(),
              amount: shillings,
              direction: 'in',
              description: 'Invoice',
              source: 'payment',
              checkout_request_id: `ws_CO_${tenantId}_${d.event}`,
              account_reference: inv.number,
            },
          })
        }
        const after = invoiceRow(inv.id)
        expect(after.status).toBe(firstPaidAt ? 'paid' : 'open')
        expect(after.paidAt).toBe(firstPaidAt)
      }),
      RUNS,
    )
  })
})

describe('billing model: usage counts once per event id', () => {
  it('sums what the first record of each event id said, through the API and the bus alike', async () => {
    const metric = fc.constantFrom('transactions', 'statements', 'payments', 'api_calls' as const)
    const record = fc.record({
      event: fc.integer({ min: 0, max: 7 }),
      metric,
      quantity: fc.integer({ min: 1, max: 1000 }),
      viaBus: fc.boolean(),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 30 }), async (records) => {
        const tenantId = await newTenant('pro')
        const first = new Map<number, { metric: string; quantity: number }>()
        for (const r of records) {
          const eventId = `evt-${tenantId}-use-${r.event}`
          const known = first.get(r.event)
          if (!known) first.set(r.event, { metric: r.metric, quantity: r.quantity })
          if (r.viaBus) {
            await kit.bus.publish(topics.usage, {
              id: eventId,
              type: topics.usage,
              version: 1,
              tenant_id: tenantId,
              occurred_at: new Date(now).toISOString(),
              data: { metric: r.metric, quantity: r.quantity },
            })
            continue
          }
          const res = recordUsage(
            b,
            { tenantId, metric: r.metric, quantity: r.quantity, eventId, source: 'api' },
            new Date(now),
          )
          expect(res.duplicate).toBe(known !== undefined)
          expect(res.quantity).toBe((known ?? r).quantity)
        }
        const model = { transactions: 0, statements: 0, payments: 0, api_calls: 0 }
        for (const { metric: m, quantity } of first.values())
          model[m as keyof typeof model] += quantity
        const sub = findSubscription(b, tenantId)!
        expect(usedIn(b, tenantId, sub.currentPeriodStart)).toEqual(model)
      }),
      RUNS,
    )
  })
})

describe('billing model: charges balance', () => {
  const price: Record<string, number> = { free: 0, pro: 250000, enterprise: 1500000, odd: 99999 }
  const plan = fc.constantFrom('free', 'pro', 'enterprise', 'odd')

  it('bills the plan the period started on plus a proration per change, lines summing to the total', async () => {
    const change = fc.record({ plan, atS: fc.integer({ min: 1, max: PERIOD_S - 1 }) })
    await fc.assert(
      fc.asyncProperty(plan, fc.array(change, { maxLength: 6 }), async (startPlan, drawn) => {
        const tenantId = await newTenant(startPlan)
        const changes = [...drawn].sort((x, y) => x.atS - y.atS)
        // Model: what each change is charged (credit below 0), and the time-weighted cost.
        let current = startPlan
        let lastS = 0
        let weighted = 0
        const prorations: number[] = []
        let rounded = 0
        for (const c of changes) {
          changePlan(b, { tenantId, planId: c.plan, at: new Date(START + c.atS * 1000) })
          if (c.plan === current) continue
          const exact = ((price[c.plan]! - price[current]!) * (PERIOD_S - c.atS)) / PERIOD_S
          const amount = Math.sign(exact) * Math.round(Math.abs(exact))
          // A change whose proration rounds to nothing is still a rounding (no line is billed).
          rounded++
          if (amount !== 0) prorations.push(amount)
          weighted += (price[current]! * (c.atS - lastS)) / PERIOD_S
          current = c.plan
          lastS = c.atS
        }
        weighted += (price[current]! * (PERIOD_S - lastS)) / PERIOD_S
        const base = price[startPlan]!
        const subtotal = base + prorations.reduce((s, a) => s + a, 0)
        // Each change rounds to the cent once: the bill is the time-weighted cost within that.
        expect(Math.abs(subtotal - weighted)).toBeLessThanOrEqual(rounded * 0.5 + 1e-6)

        const ids = runCycle(b, new Date(END)).invoices.filter(
          (id) => invoiceRow(id).tenantId === tenantId,
        )
        if (base === 0 && prorations.length === 0) {
          expect(ids).toEqual([])
          return
        }
        expect(ids).toHaveLength(1)
        const inv = invoiceRow(ids[0]!)
        const lines = JSON.parse(inv.lines) as Array<{ type: string; amount: number }>
        expect(lines.reduce((s, l) => s + cents(l.amount), 0)).toBe(inv.totalCents)
        expect(lines.filter((l) => l.type === 'base').map((l) => cents(l.amount))).toEqual(
          base > 0 ? [base] : [],
        )
        expect(lines.filter((l) => l.type === 'proration').map((l) => cents(l.amount))).toEqual(
          prorations,
        )
        expect(inv.subtotalCents).toBe(subtotal)
        // A net credit is carried, never paid out: the invoice is 0 and the credit waits.
        expect(inv.totalCents).toBe(Math.max(0, subtotal))
        expect(findSubscription(b, tenantId)!.creditCents).toBe(Math.max(0, -subtotal))
        expect(inv.status).toBe(subtotal > 0 ? 'open' : 'paid')
      }),
      RUNS,
    )
  })
})
