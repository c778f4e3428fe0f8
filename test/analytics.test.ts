import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import Papa from 'papaparse'
import type { TransactionEvent } from '../schema/events.ts'
import { KIND_ROLE, KINDS } from '../schema/vocabulary.ts'
import { metricValue } from './support/metrics.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const TOPIC = 'mobilemoney.transactions.categorized'
const localDay = (iso: string) =>
  new Date(Date.parse(iso) + 3 * 3600_000).toISOString().slice(0, 10)

/**
 * The slow reference: the summary computed straight from the rows, in cents. A row states its
 * kind or is a payment (money in a customer's, out a supplier's); revenue and expenses count
 * their kinds only (schema/vocabulary.ts KIND_ROLE).
 */
function reference(rows: TransactionEvent[]) {
  const cents = (r: TransactionEvent) => Math.round(r.amount * 100)
  const inC = rows.filter((r) => r.direction === 'in').reduce((s, r) => s + cents(r), 0)
  const outC = rows.filter((r) => r.direction === 'out').reduce((s, r) => s + cents(r), 0)
  const byKind: Record<string, { count: number; amount_in: number; amount_out: number }> = {}
  for (const k of KINDS) byKind[k] = { count: 0, amount_in: 0, amount_out: 0 }
  let revenue = 0
  let expenses = 0
  for (const r of rows) {
    const kind = r.kind ?? (r.direction === 'in' ? 'customer_payment' : 'supplier_payment')
    const signed = r.direction === 'in' ? cents(r) : -cents(r)
    byKind[kind]!.count++
    if (r.direction === 'in') byKind[kind]!.amount_in += cents(r)
    else byKind[kind]!.amount_out += cents(r)
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

let n = 0
function makeTxn(userId: string, over: Partial<TransactionEvent> = {}): TransactionEvent {
  n++
  const party = n % 7
  return {
    transaction_id: `txn_e2e_${String(n).padStart(5, '0')}`,
    occurred_at: new Date(Date.parse('2026-01-01T00:00:00Z') + n * 3_917_000).toISOString(),
    // Whole cents (1.00 to 2,500.99): as exact as a CSV or a JSON number carries it.
    amount: (((n * 7919) % 250_000) + 100) / 100,
    direction: n % 4 === 0 ? 'out' : 'in',
    counterparty_name: `Shop, "${party}"`,
    counterparty_phone: `25472200000${party}`,
    description: n % 4 === 0 ? `Stock for ${party}` : `Sale ${n}`,
    receipt_number: `QK${n}`,
    balance: 5000 + n,
    source: 'statement',
    user_id: userId,
    category: n % 4 === 0 ? 'Inventory' : 'Revenue',
    category_confidence: 0.8,
    category_source: 'rule',
    rule_id: null,
    // Every tenth row a Fuliza draw: money in, never revenue.
    ...(n % 10 === 5 ? { kind: 'loan_drawn' as const, leg: 'loan', category: 'Other' } : {}),
    ...over,
  }
}

describe('analytics end to end', () => {
  let p: TestPlatform
  let broker: MqttClient
  let acme: string
  let acmeUserId: string
  let beta: string
  let operatorToken: string
  let viewer: string
  const rows = new Map<string, TransactionEvent>()

  const publish = async (tenantId: string, transactions: TransactionEvent[], id?: string) => {
    const envelope = {
      id: id ?? `evt_${crypto.randomUUID()}`,
      type: TOPIC,
      version: 1,
      tenant_id: tenantId,
      occurred_at: new Date().toISOString(),
      data: { transactions },
    }
    await broker.publishAsync(TOPIC, JSON.stringify(envelope), { qos: 1 })
    return envelope.id
  }
  /** The summary once `check` holds for it (events cross the broker, so it is polled). */
  const summaryWhen = (token: string, check: (summary: any) => boolean, path = '') =>
    eventually(
      async () => {
        const res = await api(p.gateway, token).get(`/api/v1/analytics/summary${path}`)
        return res.status === 200 && check(res.body) ? res.body : null
      },
      10_000,
      `the analytics summary${path} to match`,
    )
  const makeUser = async (operator: string, tenantId: string, email: string, role: string) => {
    const res = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: tenantId,
      email,
      role,
      password: 'a-long-password-1',
    })
    expect(res.status).toBe(201)
    return { id: res.body.id as string, token: await p.login(email, 'a-long-password-1') }
  }

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,analytics,broker' })
    const operator = await p.login()
    await createTenants(p.gateway, operator, 'acme', 'beta')
    operatorToken = operator
    const on = await api(p.gateway, operator).put('/api/v1/tenants/acme/features', {
      advanced_analytics: true,
    })
    expect(on.status).toBe(200)
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    broker = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `analytics-e2e-${p.offset}`,
    })
    const a = await makeUser(operator, 'acme', 'analyst@acme.test', 'Analyst')
    acme = a.token
    acmeUserId = a.id
    viewer = (await makeUser(operator, 'acme', 'viewer@acme.test', 'Viewer')).token
    beta = (await makeUser(operator, 'beta', 'admin@beta.test', 'Admin')).token

    const batch = Array.from({ length: 240 }, (_, i) =>
      makeTxn(i % 3 === 0 ? acmeUserId : 'usr_someone_else'),
    )
    batch.push(
      makeTxn(acmeUserId, { occurred_at: '2026-01-05T22:30:00Z', amount: 4321.09 }),
      makeTxn(acmeUserId, { occurred_at: '2026-01-05T20:59:59.999Z', amount: 0.99 }),
    )
    for (const r of batch) rows.set(r.transaction_id, r)
    for (let i = 0; i < batch.length; i += 100) await publish('acme', batch.slice(i, i + 100))
    await publish('beta', [makeTxn('usr_beta', { amount: 777.77, direction: 'in' })])
    await summaryWhen(acme, (s) => s.total_transactions === rows.size)
  }, 60_000)
  afterAll(async () => {
    await broker?.endAsync()
    await p?.dispose()
  })

  it('serves a summary equal to the reference computed from the same rows', async () => {
    const res = await api(p.gateway, acme).get('/api/v1/analytics/summary')
    expect(res.status).toBe(200)
    expect(res.body).toEqual(reference([...rows.values()]))
  })

  it('counts a transaction at 22:30Z on the next day in Africa/Nairobi', async () => {
    const res = await api(p.gateway, acme).get(
      '/api/v1/analytics/summary?from=2026-01-06&to=2026-01-06',
    )
    const expected = [...rows.values()].filter((r) => localDay(r.occurred_at) === '2026-01-06')
    expect(expected.map((r) => r.occurred_at)).toContain('2026-01-05T22:30:00Z')
    expect(res.body).toEqual(reference(expected))
    const before = await api(p.gateway, acme).get(
      '/api/v1/analytics/summary?from=2026-01-05&to=2026-01-05',
    )
    expect(before.body).toEqual(
      reference([...rows.values()].filter((r) => localDay(r.occurred_at) === '2026-01-05')),
    )
  })

  it('narrows to the caller with scope=me', async () => {
    const res = await api(p.gateway, acme).get('/api/v1/analytics/summary?scope=me')
    expect(res.body).toEqual(reference([...rows.values()].filter((r) => r.user_id === acmeUserId)))
  })

  it('isolates tenants that share one database', async () => {
    const b = await api(p.gateway, beta).get('/api/v1/analytics/summary')
    expect(b.body).toMatchObject({ total_transactions: 1, total_amount: 777.77 })
    const list = await api(p.gateway, beta).get('/api/v1/analytics/transactions')
    expect(list.body.data.map((t: any) => t.amount)).toEqual([777.77])
    expect(
      (await api(p.gateway, acme).get('/api/v1/analytics/summary?tenant_id=beta')).status,
    ).toBe(403)
  })

  it('ignores a redelivered message and moves the rollups on a category override', async () => {
    const target = [...rows.values()].find((r) => r.direction === 'out')!
    const changed = { ...target, category: 'Rent', category_source: 'override' }
    const duplicates = () =>
      metricValue(p.gateway, 'mmp_events_handled_total', {
        consumer: 'analytics',
        outcome: 'duplicate',
      })
    const before = await duplicates()
    const id = await publish('acme', [changed])
    await publish('acme', [{ ...changed, category: 'Transport' }], id)
    // The repeat counted as dropped proves both copies were handled: only then is absence real.
    await eventually(
      async () => (await duplicates()) > before,
      10_000,
      'the redelivered message dropped by the analytics inbox',
    )
    const got = await api(p.gateway, acme).get('/api/v1/analytics/transactions?category=Rent')
    expect(got.body.data.map((t: any) => t.id)).toEqual([target.transaction_id])
    rows.set(target.transaction_id, changed)
    const insights = await api(p.gateway, acme).get('/api/v1/analytics/insights')
    expect(insights.status).toBe(200)
    expect((await api(p.gateway, acme).get('/api/v1/analytics/summary')).body).toEqual(
      reference([...rows.values()]),
    )
    const transport = await api(p.gateway, acme).get(
      '/api/v1/analytics/transactions?category=Transport',
    )
    expect(transport.body.data).toEqual([])
  })

  it('returns each transaction as DESIGN §11 reads it back', async () => {
    const res = await api(p.gateway, acme).get('/api/v1/analytics/transactions?limit=1')
    const newest = [...rows.values()].sort((a, b) => (a.occurred_at < b.occurred_at ? 1 : -1))[0]!
    expect(res.body.data[0]).toEqual({
      id: newest.transaction_id,
      occurred_at: newest.occurred_at,
      amount: newest.amount,
      direction: newest.direction,
      counterparty_name: newest.counterparty_name,
      counterparty_phone: newest.counterparty_phone,
      description: newest.description,
      receipt_number: newest.receipt_number,
      balance: newest.balance,
      category: newest.category,
      category_confidence: newest.category_confidence,
      category_source: newest.category_source,
      source: newest.source,
      user_id: newest.user_id,
      kind: newest.kind ?? (newest.direction === 'in' ? 'customer_payment' : 'supplier_payment'),
      leg: newest.leg ?? '',
    })
    expect(res.body.has_more).toBe(true)
    expect(
      (await api(p.gateway, acme).get('/api/v1/analytics/transactions?limit=501')).status,
    ).toBe(422)
  })

  it('walks every row exactly once while rows are being inserted', async () => {
    const before = new Set(rows.keys())
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res: any = await api(p.gateway, acme).get(
        `/api/v1/analytics/transactions?limit=25${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(res.status).toBe(200)
      seen.push(...res.body.data.map((t: any) => t.id))
      cursor = res.body.next_cursor
      const fresh = [
        makeTxn('usr_late'),
        makeTxn('usr_late', { occurred_at: '2026-01-03T12:00:00Z' }),
      ]
      for (const r of fresh) rows.set(r.transaction_id, r)
      await publish('acme', fresh)
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.filter((id) => before.has(id)).length).toBe(before.size)
    await summaryWhen(acme, (s) => s.total_transactions === rows.size)
  })

  it('exports a streamed CSV that parses back to the rows', async () => {
    const res = await fetch(`${p.gateway}/api/v1/analytics/export?format=csv`, {
      headers: { authorization: `Bearer ${acme}` },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/csv')
    const parsed = Papa.parse<Record<string, string>>(await res.text(), {
      header: true,
      skipEmptyLines: true,
    })
    expect(parsed.errors).toEqual([])
    expect(parsed.data.length).toBe(rows.size)
    for (const line of parsed.data) {
      const r = rows.get(line.id!)!
      expect({
        occurred_at: line.occurred_at,
        amount: Number(line.amount),
        direction: line.direction,
        counterparty_name: line.counterparty_name,
        counterparty_phone: line.counterparty_phone,
        description: line.description,
        receipt_number: line.receipt_number,
        balance: Number(line.balance),
        category: line.category,
        category_source: line.category_source,
        user_id: line.user_id,
      }).toEqual({
        occurred_at: new Date(r.occurred_at).toISOString(),
        amount: r.amount,
        direction: r.direction,
        counterparty_name: r.counterparty_name!,
        counterparty_phone: r.counterparty_phone!,
        description: r.description,
        receipt_number: r.receipt_number!,
        balance: r.balance!,
        category: r.category!,
        category_source: r.category_source!,
        user_id: r.user_id!,
      })
    }
    const viewerTry = await fetch(`${p.gateway}/api/v1/analytics/export?format=csv`, {
      headers: { authorization: `Bearer ${viewer}` },
    })
    expect(viewerTry.status).toBe(403)
  })

  it('exports a PDF whose text shows the summary numbers', async () => {
    const which = Bun.spawnSync(['which', 'pdftotext'])
    if (which.exitCode !== 0) {
      throw new Error('pdftotext is missing: install poppler-utils (apt-get install poppler-utils)')
    }
    const res = await fetch(`${p.gateway}/api/v1/analytics/export?format=pdf`, {
      headers: { authorization: `Bearer ${acme}` },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    const file = join(p.dataDir, 'report.pdf')
    writeFileSync(file, new Uint8Array(await res.arrayBuffer()))
    const out = Bun.spawnSync(['pdftotext', '-layout', file, '-'])
    expect(out.exitCode).toBe(0)
    const text = out.stdout.toString()
    const summary = (await api(p.gateway, acme).get('/api/v1/analytics/summary')).body
    // One money format everywhere (KES 1,234.00, en-KE grouping) and dates in words.
    const kes = (n: number) =>
      `KES ${n.toLocaleString('en-KE', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
    expect(text).toContain(`Transactions: ${summary.total_transactions.toLocaleString('en-KE')}`)
    expect(text).toContain(`Money in: ${kes(summary.total_in)}`)
    expect(text).toContain(`Money out: ${kes(summary.total_out)}`)
    expect(text).toContain(`Average transaction: ${kes(summary.average_transaction)}`)
    expect(text).toContain(`Active days: ${summary.active_days}`)
    expect(text).toContain(`Revenue: ${kes(summary.revenue)}`)
    expect(text).toContain(`Expenses: ${kes(summary.expenses)}`)
    expect(text).toContain(`Net (revenue - expenses): ${kes(summary.net)}`)
    expect(text).toContain('Top counterparties')
    expect(text).toContain('Segment')
    expect(text).toContain('Jan 2026')
  })

  it('serves trends, customers, insights and segments, and honours the feature flag', async () => {
    const months = await api(p.gateway, acme).get('/api/v1/analytics/trends?interval=month')
    expect(months.body.data.reduce((s: number, m: any) => s + m.transactions, 0)).toBe(rows.size)
    const customers = await api(p.gateway, acme).get('/api/v1/analytics/customers?limit=3')
    expect(customers.status).toBe(200)
    expect(customers.body.data).toHaveLength(3)
    expect(customers.body.data[0].total_in).toBeGreaterThanOrEqual(customers.body.data[1].total_in)
    const segments = await api(p.gateway, acme).get('/api/v1/analytics/segments')
    expect(segments.status).toBe(200)
    const off0 = await api(p.gateway, operatorToken).put('/api/v1/tenants/beta/features', {
      advanced_analytics: false,
    })
    expect(off0.status).toBe(200)
    const off = await eventually(
      async () => {
        const r = await api(p.gateway, beta).get('/api/v1/analytics/segments')
        return r.status === 402 ? r : null
      },
      5000,
      'segments refused once advanced_analytics is off',
    )
    expect(off.body.code).toBe('FEATURE_DISABLED')
    expect((await api(p.gateway, beta).get('/api/v1/analytics/insights')).status).toBe(200)
    const pdf = await fetch(`${p.gateway}/api/v1/analytics/export?format=pdf`, {
      headers: { authorization: `Bearer ${beta}` },
    })
    expect(pdf.status).toBe(200)
    const file = join(p.dataDir, 'beta.pdf')
    writeFileSync(file, new Uint8Array(await pdf.arrayBuffer()))
    const text = Bun.spawnSync(['pdftotext', '-layout', file, '-']).stdout.toString()
    expect(text).toContain('Money in: KES 777.77')
    expect(text).not.toContain('Segment')
  })

  it('loses and doubles nothing when killed while applying batches', async () => {
    const batches = Array.from({ length: 16 }, () =>
      Array.from({ length: 400 }, () => makeTxn(acmeUserId)),
    )
    const ids = batches.map(() => `evt_${crypto.randomUUID()}`)
    for (const b of batches) for (const r of b) rows.set(r.transaction_id, r)
    for (const [i, b] of batches.entries()) await publish('acme', b, ids[i])
    await p.kill()
    await broker.endAsync(true)
    await p.restart()
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    broker = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `analytics-e2e-${p.offset}-2`,
    })
    acme = await p.login('analyst@acme.test', 'a-long-password-1')
    // What a publisher's outbox relay does after a crash: send everything again, same ids.
    for (const [i, b] of batches.entries()) await publish('acme', b, ids[i])
    await summaryWhen(acme, (s) => s.total_transactions === rows.size)
    const res = await api(p.gateway, acme).get('/api/v1/analytics/summary')
    expect(res.body).toEqual(reference([...rows.values()]))
  }, 60_000)
})
