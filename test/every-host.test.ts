import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Hosts, startHosts } from './support/hosts.ts'
import { api, eventually } from './support/platform.ts'
import { createTenantOwner } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'

/** Every `.db` file under a data dir's `tenants/`, as `folder/file`. */
function tenantFiles(dataDir: string): string[] {
  const root = join(dataDir, 'tenants')
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((d) =>
    readdirSync(join(root, d))
      .filter((f) => f.endsWith('.db'))
      .map((f) => `${d}/${f}`),
  )
}

/**
 * DESIGN §12, every part on its own host: auth, tenant, billing, the simulator, payment, parser,
 * categorizer, analytics, cashflow, webhook and the gateway as eleven `mmp serve --only`
 * processes, each with its own data dir (and its own network namespace where the machine allows
 * it), on Debian's mosquitto (test/support/hosts.ts). They share nothing but the broker, the
 * discovery and the hop key from their settings: no file of another part, no loopback. A Pro
 * tenant's whole journey goes through them.
 */
describe('every part on its own host', () => {
  let hosts: Hosts
  let parts: Hosts['parts']
  let receiver: ReturnType<typeof startWebhookReceiver>
  /** The receiver's address as the webhook part reaches it. */
  let hookBase: string
  let gateway: string
  let operator: ReturnType<typeof api>
  beforeAll(async () => {
    hosts = await startHosts()
    receiver = startWebhookReceiver(SECRET, hosts.hostIp)
    hookBase = await hosts.webhookTo(receiver.port)
    parts = hosts.parts
    gateway = hosts.gateway
    operator = api(gateway, await parts.get('gateway')!.login())
  }, 120_000)
  afterAll(async () => {
    receiver?.stop()
    await hosts?.dispose()
  })

  /**
   * A Pro tenant of the test's own (made in the test: the billing cycle one test runs covers
   * every tenant there is then), its Admin client and token.
   */
  const proTenant = (id: string) => createTenantOwner(parts.get('gateway')!, { id, plan: 'pro' })
  /** Two rows of a statement two days old, uploaded once the parser part knows the tenant. */
  const importStatement = async (token: string) => {
    const day = new Date(Date.now() - 2 * 86_400_000)
    const at = (h: number) =>
      new Date(day.getTime() + h * 3_600_000 + 3 * 3_600_000)
        .toISOString()
        .slice(0, 19)
        .replace('T', ' ')
    const csv = [
      'M-PESA STATEMENT',
      '',
      'DETAILED STATEMENT',
      'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
      `SHA1B2C3D4,${at(9)},Funds received from JANE 0712xxx678,Completed,1500.00,,1500.00`,
      `SHA1B2C3D5,${at(11)},Pay Bill to 888880 - KPLC PREPAID,Completed,,-400.00,1100.00`,
      '',
    ].join('\n')
    const form = new FormData()
    form.append('file', new File([csv], 'statement.csv'))
    const upload = await eventually(
      async () => {
        const res = await fetch(`${gateway}/api/v1/statements`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        })
        return res.status === 404 ? null : res
      },
      20_000,
      'the parser part knowing the tenant',
    )
    expect(upload.status).toBeLessThan(300)
  }
  /** An STK push of KES 75, settled: its status. */
  const stkPush = async (admin: ReturnType<typeof api>) => {
    const push = await admin.post('/api/v1/payments/stkpush', {
      phone_number: '254712345678',
      amount: 75,
      account_reference: 'HOSTS',
      transaction_desc: 'Every host',
    })
    expect(push.status).toBe(202)
    return await eventually(
      async () => {
        const s = await admin.get(`/api/v1/payments/status/${push.body.checkout_request_id}`)
        return s.body.status === 'success' ? s.body : null
      },
      20_000,
      'the STK push settled',
    )
  }
  /** The tenant's rows in analytics once there are `n`, each categorized. */
  const categorized = (admin: ReturnType<typeof api>, n: number) =>
    eventually(
      async () => {
        const r = await admin.get('/api/v1/analytics/transactions?limit=50')
        const data = (r.body.data ?? []) as Array<Record<string, any>>
        return data.length >= n && data.every((t) => t.category) ? data : null
      },
      30_000,
      `${n} categorized transactions in analytics`,
    )

  it('imports a statement, takes an STK push and a till payment, and shows them everywhere', async () => {
    const { admin, token } = await proTenant('shop')
    const hook = await eventually(
      async () => {
        const r = await admin.post('/api/v1/webhooks', {
          url: `${hookBase}/shop`,
          events: ['payment.success'],
          secret: SECRET,
        })
        return r.status === 201 ? r : null
      },
      20_000,
      'the webhook part knowing the tenant',
    )
    expect(hook.status).toBe(201)
    await importStatement(token)
    const paid = await stkPush(admin)
    const till = await admin.post('/api/v1/payments/c2b/register', {
      shortcode: '600100',
      response_type: 'Completed',
    })
    expect(till.status).toBe(201)
    expect(
      (
        await admin.post('/api/v1/payments/c2b/simulate', {
          shortcode: '600100',
          amount: 250,
          phone_number: '0712345601',
        })
      ).status,
    ).toBe(202)

    // Categorized (categorizer), counted (analytics), forecast (cashflow), metered (billing).
    const rows = await categorized(admin, 4)
    expect(rows.map((t) => t.amount).sort((a, b) => a - b)).toEqual([75, 250, 400, 1500])
    expect(rows.find((t) => t.receipt_number === paid.mpesa_receipt_number)).toMatchObject({
      amount: 75,
      direction: 'in',
      category: 'Revenue',
    })
    const summary = await admin.get('/api/v1/analytics/summary')
    expect(summary.body).toMatchObject({ total_transactions: 4, total_in: 1825, total_out: 400 })
    expect((await admin.get('/api/v1/cashflow/summary/shop')).status).toBe(200)
    await eventually(
      async () => {
        const usage = (await admin.get('/api/v1/billing/usage/shop')).body.metrics
        return usage?.statements.used === 1 && usage?.payments.used >= 1
      },
      20_000,
      'the statement and payment metered by billing',
    )

    // A verified webhook for each payment.
    const hooks = await eventually(
      () => {
        const ok = receiver.hits.filter(
          (h) => h.tenant === 'shop' && h.verified && h.body.event === 'payment.success',
        )
        return ok.length >= 2 ? ok : null
      },
      20_000,
      'two verified payment.success webhooks',
    )
    expect(hooks.map((h) => h.body.data.amount).sort((a, b) => a - b)).toEqual([75, 250])
  }, 120_000)

  it('invoices the period through billing on its own host', async () => {
    const { admin } = await proTenant('billed')
    const sub = (
      await eventually(async () => {
        const r = await admin.get('/api/v1/billing/subscriptions/billed')
        return r.status === 200 ? r : null
      })
    ).body
    const at = new Date(new Date(sub.current_period_end).getTime() + 3_600_000).toISOString()
    expect((await operator.post('/api/v1/billing/run-cycle', { at })).status).toBe(200)
    const invoices = (await admin.get('/api/v1/billing/invoices')).body.data
    expect(invoices).toHaveLength(1)
    expect(invoices[0]).toMatchObject({ tenant_id: 'billed', status: 'open', currency: 'KES' })
    expect(invoices[0].total).toBeGreaterThan(0)
  })

  it('runs each part in a network namespace of its own where the machine allows it', async () => {
    if (!hosts.namespaces) {
      console.log('no network namespaces here (needs root and iproute2): one loopback, own ports')
      return
    }
    // Nothing listens on the host's loopback: each part is reached at its own address only.
    for (const [only, p] of parts) {
      const port = new URL(p.url(only)).port
      const onLoopback = await fetch(`http://127.0.0.1:${port}/health`).then(
        () => true,
        () => false,
      )
      expect({ only, onLoopback }).toEqual({ only, onLoopback: false })
      expect((await fetch(`${p.url(only)}/health`)).status).toBe(200)
    }
  })

  it('keeps in each data dir only the files of the part that owns it', async () => {
    // A Pro tenant with rows in every part that stores them: a statement and a payment.
    const { admin, token } = await proTenant('kept')
    await importStatement(token)
    await stkPush(admin)
    await categorized(admin, 3)
    // Its rows live in its own folder on each part that stores them, and nowhere else.
    for (const [only, p] of parts) {
      const files = tenantFiles(p.dataDir).filter((f) => f.startsWith('kept/'))
      const own = files.map((f) => f.slice('kept/'.length).replace(/\.db$/, ''))
      expect({ only, own: own.filter((s) => s !== only) }).toEqual({ only, own: [] })
    }
    for (const only of ['analytics', 'payment', 'parser', 'categorizer']) {
      expect(existsSync(join(parts.get(only)!.dataDir, 'tenants', 'kept', `${only}.db`))).toBe(true)
    }
    // No part but auth holds the signing key.
    for (const [only, p] of parts) {
      if (only !== 'auth') expect(existsSync(join(p.dataDir, 'keys'))).toBe(false)
    }
  })

  it('starts a part afresh on an empty data dir knowing every tenant and its entitlements', async () => {
    const { admin } = await proTenant('known')
    await eventually(
      async () => (await admin.get('/api/v1/billing/subscriptions/known')).status === 200,
    )
    // The parser's host is replaced: a new, empty data dir, nothing heard on the broker yet.
    const fresh = await hosts.replace('parser')
    const dataDir = fresh.dataDir
    const file = (name: string) => join(dataDir, 'tenants', 'known', name)
    await eventually(
      () => existsSync(file('placement.json')) && existsSync(file('entitlements.json')),
      20_000,
      'the profile and entitlements of the tenant on the fresh part',
    )
    const held = JSON.parse(readFileSync(file('entitlements.json'), 'utf8'))
    // Billing's view of the period, not a default.
    const sub = (await admin.get('/api/v1/billing/subscriptions/known')).body
    expect(held).toMatchObject({ plan: 'pro', status: 'active' })
    expect(Date.parse(held.period_start)).toBe(Date.parse(sub.current_period_start))
    const res = await admin.post('/api/v1/parser/transactions', {
      transactions: [
        {
          occurred_at: new Date(Date.now() - 86_400_000).toISOString(),
          amount: 20,
          direction: 'in',
          description: 'After the parser came back',
          receipt_number: 'SHAGAIN001',
        },
      ],
    })
    expect(res.body).toMatchObject({ accepted: 1 })
  })
})
