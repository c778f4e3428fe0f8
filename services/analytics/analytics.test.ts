import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import Papa from 'papaparse'
import { migrations } from '../../schema/analytics/migrations.ts'
import {
  type EventEnvelope,
  paymentKind,
  type TransactionEvent,
  topics,
} from '../../schema/events.ts'
import { KIND_ROLE, KINDS } from '../../schema/vocabulary.ts'
import { api } from '../../test/support/client.ts'
import { newId } from '../kernel/ids.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { subscribeTransactions } from './consumers.ts'
import { createAnalyticsApp } from './routes.ts'

const NAIROBI = 3 * 3600_000
const localDay = (iso: string) => new Date(Date.parse(iso) + NAIROBI).toISOString().slice(0, 10)

let seq = 0
function txn(over: Partial<TransactionEvent> = {}): TransactionEvent {
  seq++
  const day = 1 + (seq % 27)
  const hour = (seq * 7) % 24
  return {
    transaction_id: `t-${seq}`,
    occurred_at: `2026-03-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:30:00Z`,
    amount: Math.round(((seq * 7919) % 500_000) + 1) / 100,
    direction: seq % 3 === 0 ? 'out' : 'in',
    counterparty_name: `Customer ${seq % 9}`,
    counterparty_phone: `2547000000${seq % 9}`,
    description: `payment ${seq}`,
    receipt_number: `R${seq}`,
    balance: 1000,
    source: 'api',
    user_id: seq % 2 ? 'usr_a' : 'usr_b',
    category: seq % 3 === 0 ? (seq % 2 ? 'Rent' : 'Inventory') : 'Revenue',
    category_confidence: 0.9,
    category_source: 'rule',
    rule_id: null,
    // Every few rows money that is neither revenue nor expense, or a charge.
    ...(seq % 5 === 0 ? { kind: seq % 3 === 0 ? SPENT[seq % 4]! : MOVED[seq % 4]! } : {}),
    ...over,
  }
}

const SPENT = ['charge', 'loan_repaid', 'savings_out', 'airtime'] as const
const MOVED = ['loan_drawn', 'savings_in', 'cash_deposit', 'own_transfer'] as const

function envelope(tenantId: string, transactions: TransactionEvent[]): EventEnvelope {
  return {
    id: newId('evt'),
    type: topics.transactionsCategorized,
    version: 1,
    tenant_id: tenantId,
    occurred_at: new Date().toISOString(),
    data: { transactions },
  }
}

/** The slow reference: the same numbers straight from the rows, in cents. */
function reference(rows: TransactionEvent[]) {
  const cents = (r: TransactionEvent) => Math.round(r.amount * 100)
  const inC = rows.filter((r) => r.direction === 'in').reduce((s, r) => s + cents(r), 0)
  const outC = rows.filter((r) => r.direction === 'out').reduce((s, r) => s + cents(r), 0)
  const byKind: Record<string, { count: number; amount_in: number; amount_out: number }> = {}
  for (const k of KINDS) byKind[k] = { count: 0, amount_in: 0, amount_out: 0 }
  let revenue = 0
  let expenses = 0
  for (const r of rows) {
    const kind = r.kind ?? paymentKind(r)
    const line = byKind[kind]!
    const signed = r.direction === 'in' ? cents(r) : -cents(r)
    line.count++
    if (r.direction === 'in') line.amount_in += cents(r)
    else line.amount_out += cents(r)
    if (KIND_ROLE[kind] === 'revenue') revenue += signed
    if (KIND_ROLE[kind] === 'expense') expenses -= signed
  }
  for (const line of Object.values(byKind)) {
    line.amount_in /= 100
    line.amount_out /= 100
  }
  return {
    total_transactions: rows.length,
    total_amount: (inC + outC) / 100,
    average_transaction: rows.length ? Math.round((inC + outC) / rows.length) / 100 : 0,
    active_days: new Set(rows.map((r) => localDay(r.occurred_at))).size,
    total_in: inC / 100,
    total_out: outC / 100,
    revenue: revenue / 100,
    expenses: expenses / 100,
    net: (revenue - expenses) / 100,
    balance_change: (inC - outC) / 100,
    by_kind: byKind,
  }
}

describe('analytics service', () => {
  let kit: TestKit
  let app: ReturnType<typeof createAnalyticsApp>
  const rows = new Map<string, TransactionEvent>()
  /** GET as a user of a tenant (an Analyst of acme unless told). */
  const json = async (
    path: string,
    opts: { tenantId?: string; role?: any; userId?: string } = {},
  ) =>
    api(
      app,
      await kit.authFor({
        tenantId: opts.tenantId ?? 'acme',
        role: opts.role ?? 'Analyst',
        userId: opts.userId ?? 'usr_a',
      }),
    ).get(path)

  beforeAll(async () => {
    kit = await createTestKit('analytics', { migrations })
    kit.ctx.clock.set('2026-03-29T12:00:00Z')
    app = createAnalyticsApp(kit.ctx)
    await subscribeTransactions(kit.ctx)
    const batch = Array.from({ length: 300 }, () => txn())
    batch.push(
      txn({ occurred_at: '2026-03-10T22:30:00Z', amount: 12.34 }),
      txn({ occurred_at: '2026-03-10T20:59:59.999Z', amount: 0.01 }),
    )
    for (const r of batch) rows.set(r.transaction_id, r)
    await kit.bus.publish(topics.transactionsCategorized, envelope('acme', batch.slice(0, 150)))
    await kit.bus.publish(topics.transactionsCategorized, envelope('acme', batch.slice(150)))
    await kit.bus.publish(
      topics.transactionsCategorized,
      envelope('beta', [txn({ transaction_id: 'beta-1', amount: 999 })]),
    )
  })
  afterAll(() => kit.cleanup())

  it('summarises to the cent against a reference computed from the rows', async () => {
    const { status, body } = await json('/api/v1/analytics/summary')
    expect(status).toBe(200)
    expect(body).toEqual(reference([...rows.values()]))
  })

  it('puts a transaction at 22:30Z on the next Nairobi day', async () => {
    const { body } = await json('/api/v1/analytics/summary?from=2026-03-11&to=2026-03-11')
    const expected = [...rows.values()].filter((r) => localDay(r.occurred_at) === '2026-03-11')
    expect(expected.some((r) => r.occurred_at === '2026-03-10T22:30:00Z')).toBe(true)
    expect(body).toEqual(reference(expected))
  })

  it('honours date-time bounds inside a day and scope=me', async () => {
    const from = '2026-03-05T10:15:00Z'
    const to = '2026-03-20T04:00:00Z'
    const inRange = [...rows.values()].filter(
      (r) =>
        Date.parse(r.occurred_at) >= Date.parse(from) &&
        Date.parse(r.occurred_at) <= Date.parse(to),
    )
    const { body } = await json(`/api/v1/analytics/summary?from=${from}&to=${to}`)
    expect(body).toEqual(reference(inRange))
    const mine = await json(`/api/v1/analytics/summary?from=${from}&to=${to}&scope=me`)
    expect(mine.body).toEqual(reference(inRange.filter((r) => r.user_id === 'usr_a')))
  })

  it('matches the reference for random ranges of dates and date-times', async () => {
    let r = 7
    const rnd = () => {
      r = (r * 48_271) % 2_147_483_647
      return r / 2_147_483_647
    }
    const base = Date.parse('2026-02-27T00:00:00Z')
    const pick = () => {
      const ms = base + Math.floor(rnd() * 32 * 86_400_000)
      const iso = new Date(ms).toISOString()
      return rnd() < 0.4 ? iso.slice(0, 10) : iso
    }
    const bound = (v: string, end: boolean) =>
      v.length === 10
        ? Date.parse(`${v}T00:00:00+03:00`) + (end ? 86_400_000 : 0)
        : Date.parse(v) + (end ? 1 : 0)
    for (let i = 0; i < 40; i++) {
      let [from, to] = [pick(), pick()]
      if (bound(from, false) > bound(to, true)) [from, to] = [to, from]
      if (bound(from, false) > bound(to, true)) continue
      const expected = [...rows.values()].filter((t) => {
        const at = Date.parse(t.occurred_at)
        return at >= bound(from, false) && at < bound(to, true)
      })
      const { body } = await json(`/api/v1/analytics/summary?from=${from}&to=${to}`)
      expect({ from, to, ...body }).toEqual({ from, to, ...reference(expected) })
    }
  })

  it('keeps tenants apart in the shared database', async () => {
    const { body } = await json('/api/v1/analytics/summary', { tenantId: 'beta' })
    expect(body.total_transactions).toBe(1)
    expect(body.total_amount).toBe(999)
    const other = await json('/api/v1/analytics/summary?tenant_id=beta')
    expect(other.status).toBe(403)
  })

  it('applies a redelivered message once and a category override to the rollups', async () => {
    const target = [...rows.values()].find((r) => r.direction === 'out')!
    const override = { ...target, category: 'Utilities', category_source: 'override' }
    const e = envelope('acme', [override])
    await kit.bus.publish(topics.transactionsCategorized, e)
    await kit.bus.publish(topics.transactionsCategorized, e)
    rows.set(target.transaction_id, override)
    const { body } = await json('/api/v1/analytics/summary')
    expect(body).toEqual(reference([...rows.values()]))
    const list = await json('/api/v1/analytics/transactions?category=Utilities')
    expect(list.body.data.map((t: any) => t.id)).toEqual([target.transaction_id])
    expect(list.body.data[0]).toMatchObject({
      amount: target.amount,
      category: 'Utilities',
      category_source: 'override',
      direction: 'out',
    })
  })

  it('buckets trends by day, week and month', async () => {
    const all = [...rows.values()]
    for (const interval of ['day', 'week', 'month'] as const) {
      const { body } = await json(`/api/v1/analytics/trends?interval=${interval}`)
      const count = body.data.reduce((s: number, p: any) => s + p.transactions, 0)
      expect(count).toBe(all.length)
      const inSum = body.data.reduce((s: number, p: any) => s + Math.round(p.total_in * 100), 0)
      expect(inSum / 100).toBe(reference(all).total_in)
    }
    const weeks = await json('/api/v1/analytics/trends?interval=week')
    for (const p of weeks.body.data) expect(new Date(`${p.period}T00:00:00Z`).getUTCDay()).toBe(1)
  })

  it('walks every row exactly once while rows are being inserted', async () => {
    const before = new Set(rows.keys())
    const seen: string[] = []
    let cursor: string | null = null
    let page = 0
    do {
      const res: any = await json(
        `/api/v1/analytics/transactions?limit=37${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(res.status).toBe(200)
      seen.push(...res.body.data.map((t: any) => t.id))
      cursor = res.body.next_cursor
      expect(res.body.has_more).toBe(cursor !== null)
      const fresh = [txn(), txn({ occurred_at: '2026-03-15T09:00:00Z' })]
      for (const r of fresh) rows.set(r.transaction_id, r)
      await kit.bus.publish(topics.transactionsCategorized, envelope('acme', fresh))
      page++
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of before) expect(seen).toContain(id)
    expect(page).toBeGreaterThan(5)
  })

  it('filters transactions and refuses a limit above 500', async () => {
    const all = [...rows.values()]
    const { body } = await json(
      '/api/v1/analytics/transactions?direction=in&min_amount=100&max_amount=2000.5&limit=500',
    )
    const expected = all.filter(
      (r) => r.direction === 'in' && r.amount >= 100 && r.amount <= 2000.5,
    )
    expect(body.data.length).toBe(Math.min(500, expected.length))
    expect(body.data.every((t: any) => t.direction === 'in' && t.amount >= 100)).toBe(true)
    const phone = await json('/api/v1/analytics/transactions?phone=0700000003&limit=500')
    expect(phone.body.data.length).toBe(
      all.filter((r) => r.counterparty_phone === '254700000003').length,
    )
    const q = await json('/api/v1/analytics/transactions?q=payment%2012')
    expect(q.body.data.every((t: any) => t.description.includes('payment 12'))).toBe(true)
    expect((await json('/api/v1/analytics/transactions?limit=501')).status).toBe(422)
    expect((await json('/api/v1/analytics/transactions?min_amount=1.234')).status).toBe(422)
    expect((await json('/api/v1/analytics/transactions?cursor=nonsense')).status).toBe(422)
  })

  it('streams a CSV that parses back to the rows', async () => {
    const res = await json('/api/v1/analytics/export?format=csv&direction=out')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/csv')
    const parsed = Papa.parse<Record<string, string>>(res.body as string, {
      header: true,
      skipEmptyLines: true,
    })
    const expected = [...rows.values()].filter((r) => r.direction === 'out')
    expect(parsed.data.length).toBe(expected.length)
    for (const line of parsed.data) {
      const r = rows.get(line.id!)!
      expect(Number(line.amount)).toBe(r.amount)
      expect(line.counterparty_phone).toBe(r.counterparty_phone!)
      expect(line.category).toBe(r.category!)
      expect(line.occurred_at).toBe(new Date(r.occurred_at).toISOString())
    }
    expect((await json('/api/v1/analytics/export?format=csv', { role: 'Viewer' })).status).toBe(403)
  })

  it('lists top customers by the money they paid in, with RFM segments', async () => {
    const { body } = await json('/api/v1/analytics/customers?limit=3')
    expect(body.data.length).toBe(3)
    const byPhone = new Map<string, number>()
    for (const r of rows.values()) {
      // A loan drawn or savings withdrawn is money in, but not from a customer.
      if (r.direction !== 'in' || (r.kind ?? 'customer_payment') !== 'customer_payment') continue
      byPhone.set(
        r.counterparty_phone!,
        (byPhone.get(r.counterparty_phone!) ?? 0) + Math.round(r.amount * 100),
      )
    }
    const top = [...byPhone.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3)
    expect(body.data.map((c: any) => [c.counterparty_phone, Math.round(c.total_in * 100)])).toEqual(
      top,
    )
    expect(typeof body.data[0].segment).toBe('string')
  })

  it('gives insights and segments, and 402 for segments without advanced analytics', async () => {
    const insights = await json('/api/v1/analytics/insights')
    expect(insights.status).toBe(200)
    const types = insights.body.data.map((i: any) => i.type)
    expect(types).toEqual(expect.arrayContaining(['revenue_change_wow', 'revenue_change_mom']))
    const segments = await json('/api/v1/analytics/segments')
    expect(segments.status).toBe(200)
    expect(segments.body.data.reduce((s: number, x: any) => s + x.customers, 0)).toBe(9)
    kit.registry.setPlacement('beta', {
      isolation: 'shared',
      features: { advanced_analytics: false },
    })
    const off = await json('/api/v1/analytics/segments', { tenantId: 'beta' })
    expect(off.status).toBe(402)
    expect(off.body.code).toBe('FEATURE_DISABLED')
    const basic = await json('/api/v1/analytics/insights', { tenantId: 'beta' })
    expect(basic.status).toBe(200)
    const empty = await json('/api/v1/analytics/insights', { tenantId: 'no-sales-yet' })
    expect(empty.status).toBe(200)
    expect(empty.body.data.map((i: any) => i.type)).not.toContain('revenue_change_wow')
  })

  it('runs every route through the security suite', async () => {
    const paths = ['summary', 'transactions', 'customers', 'insights', 'trends', 'segments']
    for (const path of [...paths, 'export?format=csv']) {
      const url = `/api/v1/analytics/${path}`
      expect((await api(app).get(url)).status).toBe(401)
      const forged = await api(app, await kit.authFor({ tenantId: 'acme' }), {
        'x-tenant-id': 'beta',
      }).get(url)
      expect(forged.status).toBe(403)
      const sep = path.includes('?') ? '&' : '?'
      expect((await json(`/api/v1/analytics/${path}${sep}tenant_id=beta`)).status).toBe(403)
      const operator = await json(`/api/v1/analytics/${path}${sep}tenant_id=beta`, {
        tenantId: 'platform',
        role: 'Admin',
      })
      expect(operator.status).toBeLessThan(500)
      expect([200, 402]).toContain(operator.status)
    }
  })

  it('refuses bad dates, amounts and intervals with 422', async () => {
    for (const query of [
      'summary?from=yesterday',
      'summary?from=2026-03-10&to=2026-03-01',
      'transactions?max_amount=-1',
      'trends?interval=year',
      'transactions?direction=sideways',
    ]) {
      const res = await json(`/api/v1/analytics/${query}`)
      expect(res.status).toBe(422)
      expect(res.body.code).toBe('VALIDATION_FAILED')
    }
  })
})
