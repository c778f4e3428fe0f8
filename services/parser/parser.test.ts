import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { topics } from '../../schema/events.ts'
import { migrations } from '../../schema/parser/migrations.ts'
import { api } from '../../test/support/client.ts'
import { writeEntitlements } from '../kernel/entitlements.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { createParserApp } from './routes.ts'
import { parseSms } from './sms.ts'

const fixtures = join(import.meta.dir, '../../test/fixtures')
const statement = readFileSync(join(fixtures, 'mpesa-statement.csv'), 'utf8')
const smsCases = JSON.parse(readFileSync(join(fixtures, 'mpesa-sms.json'), 'utf8')) as Array<{
  kind: string
  text: string
  expect: Record<string, unknown>
}>

let kit: TestKit
let app: ReturnType<typeof createParserApp>
beforeAll(async () => {
  kit = await createTestKit('parser', { migrations })
  app = createParserApp(kit.ctx)
})
afterAll(() => kit.cleanup())

const json = async (path: string, body: unknown, tenantId = 'acme', role = 'Manager' as const) =>
  api(app, await kit.authFor({ tenantId, role })).post(path, body)
const upload = async (text: string, tenantId = 'acme', extra: Record<string, string> = {}) => {
  const form = new FormData()
  form.append('file', new File([text], 'statement.csv', { type: 'text/csv' }))
  for (const [k, v] of Object.entries(extra)) form.append(k, v)
  const res = await app.handle(
    new Request('http://localhost/api/v1/statements', {
      method: 'POST',
      headers: await kit.authFor({ tenantId, role: 'Admin' }),
      body: form,
    }),
  )
  return { status: res.status, body: (await res.json()) as any }
}
const rawOf = (tenantId: string) =>
  kit.bus.published
    .filter((e) => e.type === topics.transactionsRaw && e.tenant_id === tenantId)
    .flatMap((e) => (e.data as { transactions: any[] }).transactions)

describe('M-Pesa SMS', () => {
  for (const c of smsCases) {
    it(`reads a ${c.kind} message: ${c.text.slice(0, 40)}…`, () => {
      const r = parseSms(c.text, 'Africa/Nairobi', '2024-02-01T00:00:00.000Z')
      if (!r.ok) throw new Error(r.message)
      expect(r.kind).toBe(c.kind as never)
      expect(r.transaction).toMatchObject(c.expect)
    })
  }

  it('covers every message kind', () => {
    const kinds = new Set(smsCases.map((c) => c.kind))
    for (const k of ['received', 'sent', 'paybill', 'buy_goods', 'withdraw', 'airtime', 'reversal'])
      expect(kinds.has(k)).toBe(true)
  })

  it('skips failure notices and rejects what is not a confirmation', async () => {
    await kit.ctx.relay.flush()
    const res = await json('/api/v1/parser/sms', {
      messages: [
        smsCases[1]!.text,
        'Failed. Insufficient funds in your M-PESA account to send Ksh5,000.00 to JOHN.',
        'Hello, your parcel is ready',
        smsCases[6]!.text,
        smsCases[1]!.text,
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: 2, duplicates: 1, rejected: 1, skipped: 1 })
    expect(res.body.errors).toEqual([
      { index: 2, message: 'not an M-Pesa confirmation: no receipt number' },
    ])
    await kit.ctx.relay.flush()
    const reversal = rawOf('acme').find((t) => t.receipt_number === 'QGH7X2K9LT')
    expect(reversal).toMatchObject({
      amount: 500,
      direction: 'in',
      counterparty_name: 'MARY WANJIKU',
      source: 'sms',
    })
  })

  it('rejects a reversal of a transaction it never saw, naming the receipt', async () => {
    const res = await json('/api/v1/parser/sms', {
      messages: [
        'RZZ1111111 Confirmed. Transaction RZZ0000000 has been reversed. Your account balance is now Ksh1.00.',
      ],
    })
    expect(res.body).toMatchObject({ accepted: 0, rejected: 1 })
    expect(res.body.errors[0].message).toContain('RZZ0000000')
  })
})

describe('statement upload', () => {
  it('imports completed rows, skips failed ones, lists bad rows and publishes events', async () => {
    await kit.ctx.relay.flush()
    kit.bus.published.length = 0
    const res = await upload(statement, 'stmt')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({ accepted: 9, duplicates: 0, rejected: 3, skipped: 2 })
    expect(res.body.import_id).toMatch(/^imp_/)
    expect(res.body.errors.map((e: any) => e.field)).toEqual([
      'Completion Time',
      'Paid In',
      'Paid In',
    ])
    await kit.ctx.relay.flush()
    const raw = rawOf('stmt')
    expect(raw).toHaveLength(9)
    expect(raw[0]).toMatchObject({
      receipt_number: 'SAB1CD2EF1',
      occurred_at: '2024-01-02T05:15:22.000Z',
      amount: 1500,
      direction: 'in',
      counterparty_name: 'PETER OTIENO',
      counterparty_phone: '254722111222',
      balance: 11500,
      source: 'statement',
      user_id: 'usr_test',
    })
    expect(raw[0]!.transaction_id).toMatch(/^txn_/)
    const byReceipt = Object.fromEntries(raw.map((t) => [t.receipt_number, t]))
    expect(byReceipt.SAB1CD2EF3).toMatchObject({
      amount: 2000,
      direction: 'out',
      counterparty_name: 'KPLC PREPAID',
    })
    expect(byReceipt.SAB1CD2EF8).toMatchObject({
      amount: 500,
      direction: 'in',
      counterparty_name: 'MARY WANJIKU',
    })
    expect(byReceipt.SAB1CD2EF9).toMatchObject({
      amount: 150000,
      direction: 'in',
      counterparty_name: 'ACME LTD via API.',
    })
    const processed = kit.bus.published.find((e) => e.type === topics.statementsProcessed)
    expect(processed?.data).toMatchObject({
      accepted: 9,
      duplicates: 0,
      rejected: 3,
      file_name: 'statement.csv',
    })
    const usage = kit.bus.published.filter((e) => e.type === topics.usage).map((e) => e.data)
    expect(usage).toEqual([
      { metric: 'transactions', quantity: 9 },
      { metric: 'statements', quantity: 1 },
    ])
  })

  it('accepts nothing twice when the same statement comes again', async () => {
    expect((await upload(statement, 'twice')).body).toMatchObject({ accepted: 9, duplicates: 0 })
    const res = await upload(statement, 'twice')
    expect(res.body).toMatchObject({ accepted: 0, duplicates: 9, rejected: 3, skipped: 2 })
  })

  it('refuses a file without a statement header with 422', async () => {
    const res = await upload('a,b,c\n1,2,3\n', 'stmt')
    expect(res.status).toBe(422)
    expect(res.body.errors[0].field).toBe('file')
  })

  it('answers 402 FEATURE_DISABLED when bulk upload is off for the tenant', async () => {
    kit.registry.setPlacement('nobulk', { isolation: 'shared', features: { bulk_upload: false } })
    const res = await upload(statement, 'nobulk')
    expect(res.status).toBe(402)
    expect(res.body.code).toBe('FEATURE_DISABLED')
  })

  it('refuses a whole statement over the plan limit with 402 and stores nothing', async () => {
    writeEntitlements(kit.registry, 'small', {
      plan: 'free',
      status: 'active',
      period_start: '2024-01-01T00:00:00Z',
      period_end: '2099-01-01T00:00:00Z',
      limits: { transactions: 5, statements: 10 },
      used: { transactions: 0 },
      updated_at: '2024-01-01T00:00:00Z',
    })
    const res = await upload(statement, 'small')
    expect(res.status).toBe(402)
    expect(res.body.code).toBe('LIMIT_EXCEEDED')
    const again = await json(
      '/api/v1/parser/transactions',
      {
        transactions: Array.from({ length: 6 }, (_, i) => ({
          occurred_at: '2024-01-01T10:00:00Z',
          amount: 10,
          direction: 'in',
          description: `sale ${i}`,
        })),
      },
      'small',
    )
    expect(again.status).toBe(402)
  })

  it('counts its own accepted rows, so batches sent before billing hears of them cannot overshoot', async () => {
    writeEntitlements(kit.registry, 'quick', {
      plan: 'free',
      status: 'active',
      period_start: '2024-01-01T00:00:00Z',
      period_end: '2099-01-01T00:00:00Z',
      limits: { transactions: 10, statements: 10 },
      used: { transactions: 0 },
      updated_at: '2024-01-01T00:00:00Z',
    })
    const batch = (n: number) => ({
      transactions: Array.from({ length: 4 }, (_, i) => ({
        occurred_at: '2024-01-01T10:00:00Z',
        amount: 10,
        direction: 'in',
        description: `batch ${n} sale ${i}`,
      })),
    })
    const statuses = await Promise.all(
      [1, 2, 3].map((n) => json('/api/v1/parser/transactions', batch(n), 'quick')),
    )
    expect(statuses.map((r) => r.status).sort()).toEqual([200, 200, 402])
  })
})

describe('JSON transactions', () => {
  it('accepts good rows, reports each bad one with its field, and dedups by receipt', async () => {
    const good = {
      occurred_at: '2024-03-01T10:00:00+03:00',
      amount: 1234.5,
      direction: 'in',
      counterparty_name: 'Alice',
      counterparty_phone: '0712000111',
      description: 'Payment for goods',
      receipt_number: 'api0000001',
      balance: 5000,
    }
    const res = await json('/api/v1/parser/transactions', {
      transactions: [
        good,
        { ...good, receipt_number: 'API0000002', amount: 1.234 },
        { ...good, receipt_number: 'API0000003', direction: 'sideways' },
        { ...good, receipt_number: 'API0000004', occurred_at: 'yesterday' },
        { ...good, receipt_number: undefined, description: '' },
        { ...good, receipt_number: 'API0000001' },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: 1, duplicates: 1, rejected: 4, skipped: 0 })
    expect(res.body.errors).toEqual([
      { index: 1, field: 'amount', message: 'must have at most 2 decimal places' },
      { index: 2, field: 'direction', message: "must be 'in' or 'out'" },
      { index: 3, field: 'occurred_at', message: 'must be an ISO 8601 date-time' },
      { index: 4, field: 'description', message: 'is required' },
    ])
    await kit.ctx.relay.flush()
    expect(rawOf('acme').find((t) => t.receipt_number === 'API0000001')).toMatchObject({
      occurred_at: '2024-03-01T07:00:00.000Z',
      amount: 1234.5,
      counterparty_phone: '254712000111',
      source: 'api',
    })
  })

  it('refuses Analysts and Viewers (import is a manage action)', async () => {
    const body = {
      transactions: [
        { occurred_at: '2024-01-01T00:00:00Z', amount: 1, direction: 'in', description: 'x' },
      ],
    }
    expect(
      (await json('/api/v1/parser/transactions', body, 'acme', 'Analyst' as never)).status,
    ).toBe(403)
    expect(
      (await json('/api/v1/parser/transactions', body, 'acme', 'Viewer' as never)).status,
    ).toBe(403)
  })

  it('lets only the platform operator act for another tenant', async () => {
    const body = {
      tenant_id: 'other',
      transactions: [
        { occurred_at: '2024-01-01T00:00:00Z', amount: 1, direction: 'in', description: 'x' },
      ],
    }
    expect((await json('/api/v1/parser/transactions', body, 'acme', 'Admin' as never)).status).toBe(
      403,
    )
    const op = await json('/api/v1/parser/transactions', body, 'platform', 'Admin' as never)
    expect(op.status).toBe(200)
    expect(op.body.accepted).toBe(1)
  })

  it('answers 422 for a body that is not a batch', async () => {
    expect((await json('/api/v1/parser/transactions', { transactions: [] })).status).toBe(422)
  })
})

describe('security', () => {
  const bodies: Record<string, unknown> = {
    '/api/v1/parser/transactions': {
      transactions: [
        { occurred_at: '2024-01-01T00:00:00Z', amount: 1, direction: 'in', description: 'x' },
      ],
    },
    '/api/v1/parser/sms': { messages: ['x'] },
  }
  for (const path of Object.keys(bodies)) {
    it(`answers 401 without a token on POST ${path}`, async () => {
      const res = await api(app).post(path, bodies[path])
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    })
  }

  it('refuses a statement for another tenant unless the caller is the operator', async () => {
    const res = await upload(statement, 'acme', { tenant_id: 'stranger' })
    expect(res.status).toBe(403)
  })

  it('answers 401 without a token on a statement upload', async () => {
    const form = new FormData()
    form.append('file', new File([statement], 's.csv'))
    const res = await app.handle(
      new Request('http://localhost/api/v1/statements', { method: 'POST', body: form }),
    )
    expect(res.status).toBe(401)
  })

  it('answers 413 for a JSON batch over 1 MiB', async () => {
    const body = JSON.stringify({ transactions: [{ description: 'x'.repeat(1024 * 1024 + 10) }] })
    const res = await app.handle(
      new Request('http://localhost/api/v1/parser/transactions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          ...(await kit.authFor({ tenantId: 'acme' })),
        },
        body,
      }),
    )
    expect(res.status).toBe(413)
  })
})
