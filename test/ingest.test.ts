import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { topics } from '../schema/events.ts'
import { cli } from './support/cli.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const _root = join(import.meta.dir, '..')
const statement = readFileSync(join(import.meta.dir, 'fixtures/mpesa-statement.csv'), 'utf8')

/** Every categorized transaction seen on the broker, by transaction id (latest wins). */
const categorized = new Map<string, any>()
const rawSeen: any[] = []

describe('transactions in: parser and categorizer on a running platform', () => {
  let p: TestPlatform
  let operator: string
  let manager: string
  let client: MqttClient

  beforeAll(async () => {
    p = await startTestPlatform({ only: 'gateway,auth,tenant,parser,categorizer,broker' })
    operator = await p.login()
    await createTenants(p.gateway, operator, 'duka')
    const created = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'duka',
      email: 'manager@duka.test',
      role: 'Manager',
      password: 'manager-pass-1',
    })
    expect(created.status).toBe(201)
    manager = await p.login('manager@duka.test', 'manager-pass-1')
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    client = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
      clientId: `ingest-test-${Date.now()}`,
    })
    client.on('message', (topic, payload) => {
      const event = JSON.parse(payload.toString())
      if (topic === topics.transactionsCategorized) {
        for (const t of event.data.transactions)
          categorized.set(t.transaction_id, { ...t, tenant_id: event.tenant_id })
      } else if (topic === topics.transactionsRaw) rawSeen.push(event)
    })
    await client.subscribeAsync([topics.transactionsCategorized, topics.transactionsRaw], {
      qos: 1,
    })
  }, 30_000)

  afterAll(async () => {
    await client?.endAsync()
    await p?.dispose()
  })

  it('imports a statement uploaded through the gateway and the categorizer labels every row', async () => {
    const form = new FormData()
    form.append('file', new File([statement], 'jan.csv', { type: 'text/csv' }))
    const res = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manager}` },
      body: form,
    })
    const body = (await res.json()) as any
    expect(res.status).toBe(201)
    expect(body).toMatchObject({ accepted: 9, duplicates: 0, rejected: 3, skipped: 2 })
    const raw = await eventually(
      () => rawSeen.find((e) => e.tenant_id === 'duka' && e.data.transactions.length === 9),
      10_000,
      'the raw batch',
    )
    const ids = raw.data.transactions.map((t: any) => t.transaction_id as string)
    await eventually(
      () => ids.every((id: string) => categorized.has(id)),
      10_000,
      'every row categorized',
    )
    const byReceipt = Object.fromEntries(
      ids.map((id: string) => [categorized.get(id).receipt_number, categorized.get(id)]),
    )
    expect(byReceipt.SAB1CD2EF1).toMatchObject({
      category: 'Revenue',
      category_source: 'rule',
      tenant_id: 'duka',
    })
    expect(byReceipt.SAB1CD2EF3).toMatchObject({
      category: 'Utilities',
      rule_id: 'rul_default_power',
    })
    expect(byReceipt.SAB1CD2EF4).toMatchObject({ category: 'Transport' })
    expect(byReceipt.SAB1CD2EF5).toMatchObject({ category: 'Other' })
    expect(byReceipt.SAB1CD2EF8).toMatchObject({ category: 'Other', direction: 'in' })

    const again = await fetch(`${p.gateway}/api/v1/statements`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manager}` },
      body: form,
    })
    expect(await again.json()).toMatchObject({ accepted: 0, duplicates: 9 })
  })

  it('categorizes a raw batch an MQTT client publishes, and an override comes back on the broker', async () => {
    const txn = {
      transaction_id: 'txn_mqtt_0001',
      occurred_at: '2024-02-01T08:00:00.000Z',
      amount: 2500,
      direction: 'out',
      counterparty_name: 'KAMAU HARDWARE',
      description: 'Merchant Payment to 445566 - KAMAU HARDWARE',
      source: 'api',
    }
    await client.publishAsync(
      topics.transactionsRaw,
      JSON.stringify({
        id: 'evt_mqtt_test_1',
        type: topics.transactionsRaw,
        version: 1,
        tenant_id: 'duka',
        occurred_at: new Date().toISOString(),
        data: { transactions: [txn] },
      }),
      { qos: 1 },
    )
    const got = await eventually(
      () => categorized.get(txn.transaction_id),
      10_000,
      'the categorized transaction',
    )
    expect(got).toMatchObject({
      category: 'Inventory',
      category_source: 'rule',
      rule_id: 'rul_default_suppliers',
      amount: 2500,
    })

    const override = await api(p.gateway, manager).put(
      `/api/v1/categorize/transactions/${txn.transaction_id}`,
      { category: 'Transport' },
    )
    expect(override.status).toBe(200)
    await eventually(
      () => categorized.get(txn.transaction_id)?.category_source === 'override',
      10_000,
      'the override on the broker',
    )
    expect(categorized.get(txn.transaction_id)).toMatchObject({
      category: 'Transport',
      category_confidence: 1,
    })
    const next = await api(p.gateway, manager).post('/api/v1/categorize/single', {
      description: 'Merchant Payment to 445566 - KAMAU HARDWARE',
      counterparty_name: 'KAMAU HARDWARE',
      direction: 'out',
    })
    expect(next.body).toMatchObject({ category: 'Transport', source: 'override' })
  })

  it('takes SMS messages through the gateway', async () => {
    const res = await api(p.gateway, manager).post('/api/v1/parser/sms', {
      messages: [
        'RGH7X2K9LQ Confirmed. Ksh3,400.00 paid to SHELL KAREN. on 7/1/24 at 6:45 PM.New M-PESA balance is Ksh6,438.00.',
      ],
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ accepted: 1, rejected: 0 })
  })

  it('imports a statement file with `mmp import` and seeds a demo tenant with `mmp demo seed`', async () => {
    const file = join(p.dataDir, 'statement.csv')
    await Bun.write(file, statement.replaceAll('SAB1', 'SCLI'))
    await createTenants(p.gateway, operator, 'clitenant', 'demo')
    const imported = await cli(p, ['import', file, '--tenant', 'clitenant'])
    // Three rows of the fixture are bad: the good ones are stored and the exit code says so.
    expect(imported.code).toBe(1)
    expect(imported.output).toContain(
      '14 rows read: 9 accepted, 0 duplicates, 3 rejected, 2 skipped (moved no money)',
    )
    expect(imported.output).toContain('mmp import: 3 of 14 rows were rejected')
    const fromCli = await eventually(
      () => rawSeen.find((e) => e.tenant_id === 'clitenant'),
      10_000,
      'the imported rows on the broker',
    )
    expect(fromCli.data.transactions[0]).toMatchObject({
      source: 'statement',
      receipt_number: 'SCLICD2EF1',
    })

    const seeded = await cli(p, [
      'demo',
      'seed',
      '--tenant',
      'demo',
      '--days',
      '30',
      '--seed',
      '3',
      '--end',
      '2024-06-30',
    ])
    expect(seeded.code).toBe(0)
    const written = Number(/(\d+) transactions written/.exec(seeded.output)?.[1])
    expect(written).toBeGreaterThan(500)
    const again = await cli(p, [
      'demo',
      'seed',
      '--tenant',
      'demo',
      '--days',
      '30',
      '--seed',
      '3',
      '--end',
      '2024-06-30',
    ])
    expect(again.output).toContain(`0 transactions written (${written} already there)`)
  }, 60_000)

  it('refuses to import or seed for a tenant that does not exist, creating nothing', async () => {
    const file = join(p.dataDir, 'ghost.csv')
    await Bun.write(file, statement.replaceAll('SAB1', 'SGHO'))
    const imported = await cli(p, ['import', file, '--tenant', 'dukka'])
    expect(imported.code).toBe(1)
    expect(imported.output).toContain('tenant dukka does not exist')
    const seeded = await cli(p, ['demo', 'seed', '--tenant', 'nosuch', '--days', '3'])
    expect(seeded.code).toBe(1)
    expect(seeded.output).toContain('tenant nosuch does not exist')
    expect(existsSync(join(p.dataDir, 'tenants', 'dukka'))).toBe(false)
    expect(existsSync(join(p.dataDir, 'tenants', 'nosuch'))).toBe(false)
    const asOperator = await api(p.gateway, operator).post('/api/v1/parser/transactions', {
      tenant_id: 'nosuch',
      transactions: [
        { occurred_at: '2024-01-01T00:00:00Z', amount: 1, direction: 'in', description: 'x' },
      ],
    })
    expect(asOperator.status).toBe(404)
    expect(asOperator.body).toMatchObject({ code: 'TENANT_NOT_FOUND', status: 404 })
  })

  it('refuses another tenant in the body and Viewers', async () => {
    const other = await api(p.gateway, manager).post('/api/v1/parser/transactions', {
      tenant_id: 'someone-else',
      transactions: [
        { occurred_at: '2024-01-01T00:00:00Z', amount: 1, direction: 'in', description: 'x' },
      ],
    })
    expect(other.status).toBe(403)
  })
})
