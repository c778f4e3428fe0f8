import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/categorizer/migrations.ts'
import { type TransactionEvent, topics } from '../../schema/events.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import { consumeTransactions } from './consumers.ts'
import { defaultRules } from './default-rules.ts'
import { Categorizer } from './engine.ts'
import { compileSafeRegex } from './regex-safety.ts'
import { createCategorizerApp } from './routes.ts'
import { createTenantStates, type TenantStates } from './state.ts'

let kit: TestKit
let states: TenantStates
let app: ReturnType<typeof createCategorizerApp>
beforeAll(async () => {
  kit = await createTestKit('categorizer', { migrations })
  states = createTenantStates(kit.ctx)
  app = createCategorizerApp(kit.ctx, states)
})
afterAll(() => kit.cleanup())

const call = async (
  method: string,
  path: string,
  body?: unknown,
  opts: { tenantId?: string; role?: 'Admin' | 'Manager' | 'Analyst' | 'Viewer' } = {},
) => {
  const res = await app.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(await kit.authFor({ tenantId: opts.tenantId ?? 'acme', role: opts.role ?? 'Manager' })),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    }),
  )
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

const txn = (over: Partial<TransactionEvent>): TransactionEvent => ({
  transaction_id: `txn_${Math.random().toString(36).slice(2)}`,
  occurred_at: '2024-01-05T10:00:00.000Z',
  amount: 100,
  direction: 'out',
  description: 'something',
  source: 'api',
  ...over,
})

describe('rules', () => {
  it('knows common Kenyan payees out of the box', () => {
    const c = new Categorizer(defaultRules)
    const cases: Array<[string, 'in' | 'out', string]> = [
      ['Pay Bill to 888880 - KPLC PREPAID Acc. 54321678', 'out', 'Utilities'],
      ['Pay Bill to 444400 - NAIROBI WATER Acc. 1234', 'out', 'Utilities'],
      ['Pay Bill to 320320 - ZUKU Acc. 998', 'out', 'Utilities'],
      ['Airtime Purchase', 'out', 'Utilities'],
      ['Merchant Payment to 123456 - SHELL KAREN', 'out', 'Transport'],
      ['Merchant Payment to 123456 - RUBIS NGONG RD', 'out', 'Transport'],
      ['Bolt ride to CBD', 'out', 'Transport'],
      ['Matatu fare to town', 'out', 'Transport'],
      ['House rent June', 'out', 'Rent'],
      ['Salary - JOHN KAMAU', 'out', 'Salaries'],
      ['Pay Bill to 522522 - TWIGA FOODS Acc. 77', 'out', 'Inventory'],
      ['Funds received from 254722111222 - PETER OTIENO', 'in', 'Revenue'],
      ['Customer Withdrawal At Agent Till 556677 - JANE AGENCIES', 'out', 'Other'],
      ['Reversal of transaction QAB123CD45', 'in', 'Other'],
      ['OverDraft of Credit Party', 'in', 'Other'],
    ]
    for (const [description, direction, category] of cases) {
      expect({ description, got: c.categorize({ description, direction }).category }).toEqual({
        description,
        got: category as never,
      })
    }
  })

  it('lets the higher priority win and reports the winning rule and its confidence', async () => {
    const low = await call('POST', '/api/v1/categorize/rules', {
      name: 'Kamau is a supplier',
      match: 'keyword',
      pattern: 'kamau',
      category: 'Inventory',
      priority: 100,
      confidence: 0.7,
    })
    expect(low.status).toBe(201)
    expect(low.body.id).toMatch(/^rul_/)
    expect(low.body).toMatchObject({ builtin: false, active: true })
    const high = await call('POST', '/api/v1/categorize/rules', {
      name: 'Big payments to Kamau are salaries',
      match: 'regex',
      pattern: 'john\\s+kamau$',
      category: 'Salaries',
      priority: 200,
      confidence: 0.85,
      direction: 'out',
      min_amount: 10000,
    })
    expect(high.status).toBe(201)
    const single = (amount: number) =>
      call('POST', '/api/v1/categorize/single', {
        description: 'Customer Transfer to 0711222333 - JOHN KAMAU',
        amount,
        direction: 'out',
      })
    expect((await single(15000)).body).toEqual({
      category: 'Salaries',
      confidence: 0.85,
      source: 'rule',
      rule_id: high.body.id,
    })
    expect((await single(500)).body).toEqual({
      category: 'Inventory',
      confidence: 0.7,
      source: 'rule',
      rule_id: low.body.id,
    })
    const patched = await call('PATCH', `/api/v1/categorize/rules/${high.body.id}`, {
      active: false,
    })
    expect(patched.body.active).toBe(false)
    expect((await single(15000)).body.category).toBe('Inventory')
    const list = await call('GET', '/api/v1/categorize/rules', undefined, { role: 'Viewer' })
    expect(list.body.data.some((r: any) => r.id === high.body.id)).toBe(false)
    expect(list.body.data.some((r: any) => r.id === 'rul_default_power')).toBe(true)
    const del = await call('DELETE', `/api/v1/categorize/rules/${low.body.id}`)
    expect(del.status).toBe(204)
    expect((await single(500)).body).toMatchObject({ category: 'Other', source: 'default' })
    expect((await call('DELETE', `/api/v1/categorize/rules/${low.body.id}`)).status).toBe(404)
  })

  it('creates a rule from just a pattern and a category, as a keyword rule', async () => {
    const res = await call('POST', '/api/v1/categorize/rules', {
      pattern: 'java house',
      category: 'Other',
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      name: 'java house',
      match: 'keyword',
      priority: 100,
      confidence: 0.9,
      direction: null,
      active: true,
    })
    const single = await call('POST', '/api/v1/categorize/single', {
      description: 'Merchant Payment to 7 - JAVA HOUSE ABC PLACE',
      amount: -850,
    })
    expect(single.body).toMatchObject({ category: 'Other', source: 'rule', rule_id: res.body.id })
  })

  it('answers the batch in input order', async () => {
    const res = await call('POST', '/api/v1/categorize', {
      transactions: [
        { description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1', direction: 'out' },
        { description: 'Funds received from 254722111222 - ANN', direction: 'in', amount: 10 },
        { description: 'Merchant Payment to 1 - SHELL KAREN', direction: 'out' },
      ],
    })
    expect(res.body.results.map((r: any) => r.category)).toEqual([
      'Utilities',
      'Revenue',
      'Transport',
    ])
  })

  it('refuses regexes that can backtrack catastrophically, and bad categories', async () => {
    for (const pattern of [
      '(a+)+$',
      '(a|aa)*b',
      '(\\w*x)+',
      '(.*a){2,}',
      'x'.repeat(201),
      '(a)\\1',
    ]) {
      expect(() => compileSafeRegex(pattern)).toThrow()
    }
    expect(compileSafeRegex('kplc\\s+(prepaid|postpaid)?').test('KPLC PREPAID')).toBe(true)
    const res = await call('POST', '/api/v1/categorize/rules', {
      name: 'evil',
      match: 'regex',
      pattern: '(a+)+$',
      category: 'Other',
    })
    expect(res.status).toBe(422)
    expect(res.body.errors[0].field).toBe('pattern')
    const bad = await call('POST', '/api/v1/categorize/rules', {
      name: 'x',
      match: 'keyword',
      pattern: 'x',
      category: 'Food',
    })
    expect(bad.status).toBe(422)
  })

  it('keeps built-in rules read-only and rule management to Admins and Managers', async () => {
    expect((await call('DELETE', '/api/v1/categorize/rules/rul_default_power')).status).toBe(409)
    const analyst = await call(
      'POST',
      '/api/v1/categorize/rules',
      { name: 'x', match: 'keyword', pattern: 'x', category: 'Other' },
      { role: 'Analyst' },
    )
    expect(analyst.status).toBe(403)
    expect(
      (await call('POST', '/api/v1/categorize/single', { description: 'x' }, { role: 'Viewer' }))
        .status,
    ).toBe(403)
  })
})

describe('broker consumer and overrides', () => {
  it('categorizes a raw batch once however often it arrives', async () => {
    const batch = [
      txn({ description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1', amount: 2000 }),
      txn({ description: 'Funds received from 254722111222 - PETER', direction: 'in' }),
    ]
    kit.bus.published.length = 0
    expect(consumeTransactions(kit.ctx, states, { id: 'evt_a', tenant_id: 'beta' }, batch)).toBe(
      true,
    )
    expect(consumeTransactions(kit.ctx, states, { id: 'evt_a', tenant_id: 'beta' }, batch)).toBe(
      false,
    )
    await kit.ctx.relay.flush()
    const out = kit.bus.published.filter((e) => e.type === topics.transactionsCategorized)
    expect(out).toHaveLength(1)
    expect((out[0]!.data as any).transactions).toMatchObject([
      {
        transaction_id: batch[0]!.transaction_id,
        category: 'Utilities',
        category_source: 'rule',
        rule_id: 'rul_default_power',
        amount: 2000,
      },
      { transaction_id: batch[1]!.transaction_id, category: 'Revenue', category_source: 'rule' },
    ])
  })

  it('makes an override stick, publishes it, and teaches later transactions', async () => {
    const first = txn({
      description: 'Customer Transfer to 0711***333 - MERCY ATIENO',
      counterparty_name: 'MERCY ATIENO',
      amount: 12000,
    })
    consumeTransactions(kit.ctx, states, { id: 'evt_b', tenant_id: 'beta' }, [first])
    await kit.ctx.relay.flush()
    kit.bus.published.length = 0
    const res = await call(
      'PUT',
      `/api/v1/categorize/transactions/${first.transaction_id}`,
      { category: 'Salaries' },
      { tenantId: 'beta', role: 'Analyst' },
    )
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      transaction_id: first.transaction_id,
      category: 'Salaries',
      category_source: 'override',
      category_confidence: 1,
    })
    await kit.ctx.relay.flush()
    const published = kit.bus.published.find((e) => e.type === topics.transactionsCategorized)
    expect((published!.data as any).transactions[0]).toMatchObject({
      transaction_id: first.transaction_id,
      category: 'Salaries',
      category_source: 'override',
    })
    // Same counterparty later: follows the override.
    const later = txn({
      description: 'Customer Transfer to 0711***333 - MERCY ATIENO',
      counterparty_name: 'MERCY ATIENO',
    })
    consumeTransactions(kit.ctx, states, { id: 'evt_c', tenant_id: 'beta' }, [later])
    await kit.ctx.relay.flush()
    const again = kit.bus.published.filter((e) => e.type === topics.transactionsCategorized).pop()
    expect((again!.data as any).transactions[0]).toMatchObject({
      category: 'Salaries',
      category_source: 'override',
    })
    // Redelivering the original raw event under a new id does not undo the override.
    consumeTransactions(kit.ctx, states, { id: 'evt_d', tenant_id: 'beta' }, [first])
    const single = await call(
      'POST',
      '/api/v1/categorize/single',
      { transaction_id: first.transaction_id, description: first.description },
      { tenantId: 'beta' },
    )
    expect(single.body).toMatchObject({ category: 'Salaries', source: 'override', confidence: 1 })
    // Another tenant learned nothing.
    const other = await call('POST', '/api/v1/categorize/single', {
      description: first.description,
      counterparty_name: 'MERCY ATIENO',
      direction: 'out',
    })
    expect(other.body.category).toBe('Other')
    expect(
      (
        await call(
          'PUT',
          '/api/v1/categorize/transactions/txn_nope',
          { category: 'Rent' },
          { tenantId: 'beta' },
        )
      ).status,
    ).toBe(404)
    expect(
      (
        await call(
          'PUT',
          `/api/v1/categorize/transactions/${first.transaction_id}`,
          { category: 'Rent' },
          { tenantId: 'acme' },
        )
      ).status,
    ).toBe(404)
  })

  it('learns from overrides with its model when no rule or lesson applies', async () => {
    const tenant = 'gamma'
    const shops = ['MAMA NJERI GROCERY', 'BABA OTIENO GROCERY', 'KARANJA GROCERY STORE']
    consumeTransactions(kit.ctx, states, { id: 'evt_g_rules', tenant_id: tenant }, [
      txn({ description: 'Merchant Payment to 1 - SHELL KAREN', counterparty_name: 'SHELL KAREN' }),
      txn({ description: 'Merchant Payment to 2 - RUBIS THIKA', counterparty_name: 'RUBIS THIKA' }),
      txn({
        description: 'Pay Bill to 888880 - KPLC PREPAID Acc. 1',
        counterparty_name: 'KPLC PREPAID',
      }),
      txn({
        description: 'Funds received from 2547 - MAMA NJERI',
        direction: 'in',
        counterparty_name: 'MAMA NJERI',
      }),
    ])
    for (const [i, shop] of shops.entries()) {
      const t = txn({
        description: `Merchant Payment to 55${i} - ${shop}`,
        counterparty_name: shop,
        amount: 3000,
      })
      consumeTransactions(kit.ctx, states, { id: `evt_g${i}`, tenant_id: tenant }, [t])
      await call(
        'PUT',
        `/api/v1/categorize/transactions/${t.transaction_id}`,
        { category: 'Inventory' },
        { tenantId: tenant },
      )
    }
    const res = await call(
      'POST',
      '/api/v1/categorize/single',
      {
        description: 'Merchant Payment to 998 - WANJIRU GROCERY',
        counterparty_name: 'WANJIRU GROCERY',
        direction: 'out',
      },
      { tenantId: tenant },
    )
    expect(res.body).toMatchObject({ category: 'Inventory', source: 'ml', rule_id: null })
    expect(res.body.confidence).toBeGreaterThanOrEqual(0.6)
    expect(res.body.confidence).toBeLessThan(1)
  })
})

describe('security', () => {
  const rule = { name: 'x', match: 'keyword', pattern: 'x', category: 'Other' }
  const routes: Array<[string, string, unknown]> = [
    ['POST', '/api/v1/categorize', { transactions: [{ description: 'x' }] }],
    ['POST', '/api/v1/categorize/single', { description: 'x' }],
    ['GET', '/api/v1/categorize/rules', undefined],
    ['POST', '/api/v1/categorize/rules', rule],
    ['PATCH', '/api/v1/categorize/rules/rul_x', { active: false }],
    ['DELETE', '/api/v1/categorize/rules/rul_x', undefined],
    ['PUT', '/api/v1/categorize/transactions/txn_x', { category: 'Rent' }],
  ]
  for (const [method, path, body] of routes) {
    it(`answers 401 without a token on ${method} ${path}`, async () => {
      const res = await app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: body ? { 'content-type': 'application/json' } : {},
          body: body ? JSON.stringify(body) : undefined,
        }),
      )
      expect(res.status).toBe(401)
    })
  }

  it("refuses to read another tenant's rules", async () => {
    expect((await call('GET', '/api/v1/categorize/rules?tenant_id=beta')).status).toBe(403)
  })
})
