/**
 * Issue 18: every create honours `Idempotency-Key`. The list of creates comes from the route
 * manifest (`create: true` in schema/routes.ts): each is sent twice through the gateway with one
 * key and must answer the second time with the stored status and body and `Idempotent-Replayed:
 * true`; a few effects are counted directly, and N concurrent sends of one key make one effect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { routes } from '../schema/routes.ts'
import { withoutSecrets } from '../services/kernel/idempotency.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const PASSWORD = 'idem-a-Owner-Passphrase-42'

interface Send {
  as: 'operator' | 'admin'
  path?: string
  body?: unknown
  multipart?: () => FormData
}

describe('Idempotency-Key on every create', () => {
  let p: TestPlatform
  let receiver: ReturnType<typeof Bun.serve>
  const tokens = { operator: '', admin: '' }
  let deliveryId = 'del_missing'

  beforeAll(async () => {
    receiver = Bun.serve({ port: 0, fetch: () => new Response('ok') })
    p = await startTestPlatform({
      env: {
        MMP_WEBHOOK_ALLOW_INSECURE: '1',
        MMP_RATE_LIMIT_FREE: '1000000',
        MMP_RATE_LIMIT_IP: '1000000',
      },
    })
    tokens.operator = await p.login()
    await createTenants(p.gateway, tokens.operator, 'idem-a')
    tokens.admin = await p.login('owner@idem-a.test', PASSWORD)
  }, 60_000)
  afterAll(async () => {
    await p?.dispose()
    receiver?.stop(true)
    // The backup's fixture writes into the default backup.dir, beside the data dir.
    if (p) rmSync(`${p.dataDir}-backups`, { recursive: true, force: true })
  })

  const at = () => `http://127.0.0.1:${receiver.port}/hook`
  /** One request per create of the manifest, in an order where later ones find what they need. */
  const fixtures: Record<string, () => Send> = {
    'POST /api/v1/backups': () => ({ as: 'operator' }),
    'POST /api/v1/tenants': () => ({
      as: 'operator',
      body: { id: 'idem-b', name: 'B', admin_email: 'owner@idem-b.test', admin_password: PASSWORD },
    }),
    'POST /api/v1/billing/plans': () => ({
      as: 'operator',
      body: { id: 'idem-plan', name: 'Idem', price: 100, limits: { transactions: 5000 } },
    }),
    'POST /api/v1/billing/subscriptions/upgrade': () => ({
      as: 'admin',
      body: { tenant_id: 'idem-a', plan: 'pro' },
    }),
    'POST /api/v1/billing/usage/record': () => ({
      as: 'admin',
      body: { tenant_id: 'idem-a', metric: 'api_calls', quantity: 1, event_id: 'idem-ev-1' },
    }),
    'POST /api/v1/billing/invoices/:invoice_id/pay': () => ({
      as: 'admin',
      path: '/api/v1/billing/invoices/inv_missing/pay',
      body: { phone_number: '254708374149' },
    }),
    'POST /api/v1/auth/users': () => ({
      as: 'admin',
      body: {
        tenant_id: 'idem-a',
        email: 'analyst@idem-a.test',
        role: 'Analyst',
        password: PASSWORD,
      },
    }),
    'POST /api/v1/tenants/:tenant_id/users': () => ({
      as: 'admin',
      path: '/api/v1/tenants/idem-a/users',
      body: { email: 'invited@idem-a.test', role: 'Viewer' },
    }),
    'POST /api/v1/auth/api-keys': () => ({ as: 'admin', body: { name: 'ci', role: 'Viewer' } }),
    'POST /api/v1/categorize/rules': () => ({
      as: 'admin',
      body: { name: 'Landlord', match: 'keyword', pattern: 'landlord', category: 'Rent' },
    }),
    'POST /api/v1/parser/transactions': () => ({
      as: 'admin',
      body: {
        transactions: [
          {
            occurred_at: '2026-01-05T09:00:00Z',
            amount: 250,
            direction: 'in',
            description: 'cash sale',
          },
        ],
      },
    }),
    'POST /api/v1/parser/sms': () => ({
      as: 'admin',
      body: {
        messages: [
          'QGH7X2K9ZZ Confirmed.You have received Ksh1,500.00 from JOHN KAMAU 0712345678 on 5/1/24 at 10:15 AM  New M-PESA balance is Ksh12,345.00.',
        ],
      },
    }),
    'POST /api/v1/statements': () => ({
      as: 'admin',
      multipart: () => {
        const form = new FormData()
        const csv = readFileSync(join(import.meta.dir, 'fixtures/mpesa-statement.csv'))
        form.set('file', new File([csv], 'statement.csv', { type: 'text/csv' }))
        return form
      },
    }),
    'POST /api/v1/payments/stkpush': () => ({
      as: 'admin',
      body: {
        phone_number: '254708374149',
        amount: 10,
        account_reference: 'IDEM-1',
        transaction_desc: 'idem test',
      },
    }),
    'POST /api/v1/payments/b2c': () => ({
      as: 'admin',
      body: { phone_number: '254708374149', amount: 10, remarks: 'refund' },
    }),
    'POST /api/v1/payments/c2b/register': () => ({
      as: 'admin',
      body: { shortcode: '600987', response_type: 'Completed' },
    }),
    'POST /api/v1/webhooks': () => ({
      as: 'admin',
      body: { url: at(), events: ['payment.success'] },
    }),
    'POST /api/v1/webhooks/trigger': () => ({
      as: 'admin',
      body: { event: 'payment.success', data: { amount: 1 } },
    }),
    'POST /api/v1/webhooks/deliveries/:id/replay': () => ({
      as: 'admin',
      path: `/api/v1/webhooks/deliveries/${deliveryId}/replay`,
    }),
    'POST /api/v1/webhooks/deliveries/replay': () => ({ as: 'admin', body: { status: 'dead' } }),
  }

  const send = (s: Send, key: string | null, path: string) =>
    fetch(`${p.gateway}${s.path ?? path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens[s.as]}`,
        ...(key ? { 'idempotency-key': key } : {}),
        ...(s.multipart ? {} : { 'content-type': 'application/json' }),
      },
      body: s.multipart ? s.multipart() : JSON.stringify(s.body ?? {}),
    })

  it('has a request for every create the manifest lists, and nothing else', () => {
    const creates = routes.filter((r) => r.create).map((r) => `${r.method} ${r.path}`)
    expect(creates.sort()).toEqual(Object.keys(fixtures).sort())
  })

  /**
   * Sends every create twice with one key, once per run, and returns what came back wrong: the
   * replay test checks it and the tests that read its effects await it first, in any order.
   */
  let sentTwice: Promise<string[]> | undefined
  const sendEveryCreateTwice = () => {
    sentTwice ??= sendTwice()
    return sentTwice
  }
  const sendTwice = async () => {
    const wrong: string[] = []
    for (const [route, fixture] of Object.entries(fixtures)) {
      const path = route.split(' ')[1]!
      const s = fixture()
      const first = await send(s, `key-${route}`, path)
      const firstBody = await first.text()
      const second = await send(s, `key-${route}`, path)
      const secondBody = await second.text()
      // A secret shown once (a key, an invitation) is not replayed: the replay says so instead.
      const shownOnce = routes.find((r) => `${r.method} ${r.path}` === route)?.shownOnce ?? []
      if (
        first.status >= 500 ||
        second.status !== first.status ||
        secondBody !== withoutSecrets(firstBody, shownOnce) ||
        second.headers.get('idempotent-replayed') !== 'true'
      )
        wrong.push(
          `${route}: ${first.status} then ${second.status} replayed=${second.headers.get('idempotent-replayed')} ${secondBody.slice(0, 160)}`,
        )
      if (route === 'POST /api/v1/webhooks/trigger' && first.status === 202)
        deliveryId = (JSON.parse(firstBody) as { deliveries: string[] }).deliveries[0] ?? deliveryId
    }
    return wrong
  }

  it('answers a create sent twice with one key once, replaying status and body', async () => {
    expect(await sendEveryCreateTwice()).toEqual([])
  })

  it('replays a create that returned a secret without the secret, saying it was shown once', async () => {
    await sendEveryCreateTwice()
    const key = { name: 'replayed', role: 'Viewer' }
    const first = await send({ as: 'admin', body: key }, 'key-shown-once', '/api/v1/auth/api-keys')
    const shown = await first.json()
    expect(shown.key).toStartWith('mmp_sk_')
    const again = await send({ as: 'admin', body: key }, 'key-shown-once', '/api/v1/auth/api-keys')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const replayed = await again.json()
    expect(replayed.key).toBeUndefined()
    expect(replayed).toMatchObject({ id: shown.id, prefix: shown.prefix })
    expect(replayed.shown_once).toContain('key was shown once')
  })

  it('made one endpoint and one cash sale from two sends', async () => {
    await sendEveryCreateTwice()
    const admin = api(p.gateway, tokens.admin)
    const endpoints = await admin.get('/api/v1/webhooks')
    expect(endpoints.body.data.filter((e: { url: string }) => e.url === at())).toHaveLength(1)
    const sales = await eventually(async () => {
      const r = await admin.get('/api/v1/analytics/transactions?q=cash%20sale')
      return r.body?.data?.length ? r.body.data : null
    })
    expect(sales).toHaveLength(1)
  })

  it('answers 409 IDEMPOTENCY_KEY_REUSED for one key with another body, on the kernel and payment', async () => {
    await sendEveryCreateTwice()
    for (const [route, changed] of [
      ['POST /api/v1/webhooks', { url: `${at()}/other`, events: ['payment.success'] }],
      [
        'POST /api/v1/payments/stkpush',
        {
          phone_number: '254708374149',
          amount: 11,
          account_reference: 'IDEM-1',
          transaction_desc: 'idem test',
        },
      ],
    ] as const) {
      const res = await send({ as: 'admin', body: changed }, `key-${route}`, route.split(' ')[1]!)
      expect(res.status).toBe(409)
      expect(await res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' })
    }
  })

  it('makes one effect of N concurrent sends with one key', async () => {
    const s: Send = {
      as: 'admin',
      body: {
        transactions: [
          {
            occurred_at: '2026-01-06T09:00:00Z',
            amount: 75,
            direction: 'in',
            description: 'concurrent sale at the till', // not matched by the 'cash sale' search above
          },
        ],
      },
    }
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send(s, 'key-concurrent', '/api/v1/parser/transactions')),
    )
    for (const a of answers) expect([200, 409]).toContain(a.status)
    const admin = api(p.gateway, tokens.admin)
    await eventually(async () => {
      const r = await admin.get('/api/v1/analytics/transactions?q=concurrent')
      return r.body?.data?.length ? r.body.data : null
    })
    // A second send after all have answered is a replay, so the count can only be what it is now.
    const again = await send(s, 'key-concurrent', '/api/v1/parser/transactions')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const r = await admin.get('/api/v1/analytics/transactions?q=concurrent')
    expect(r.body.data).toHaveLength(1)
  })
})
