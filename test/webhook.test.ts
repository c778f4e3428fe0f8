import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import mqtt, { type MqttClient } from 'mqtt'
import { Webhook } from 'standardwebhooks'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'
const root = join(import.meta.dir, '..')

interface Hit {
  id: string
  path: string
  body: any
  at: number
  verified: boolean
}

describe('webhooks end to end', () => {
  let p: TestPlatform
  let operator: string
  let acme: string
  let beta: string
  let broker: MqttClient
  let receiver: ReturnType<typeof Bun.serve>
  let base: string
  const hits: Hit[] = []
  const failFirst = new Map<string, number>()
  /** While set, /slow requests hang until released (they never get an answer). */
  let hold: Promise<void> | null = null
  let release = () => {}
  const held = new Set<string>()
  let seq = 0

  const publish = (topic: string, tenant: string, data: Record<string, unknown>) =>
    broker.publishAsync(
      topic,
      JSON.stringify({
        id: `evt_test_${++seq}_${Date.now()}`,
        type: topic,
        version: 1,
        tenant_id: tenant,
        occurred_at: new Date().toISOString(),
        data,
      }),
      { qos: 1 },
    )

  beforeAll(async () => {
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url)
        const text = await req.text()
        const headers = Object.fromEntries(req.headers)
        let verified = false
        try {
          new Webhook(SECRET).verify(text, headers)
          verified = true
        } catch {}
        const id = headers['webhook-id'] ?? ''
        if (url.pathname === '/slow' && hold) {
          held.add(id)
          await hold
          return new Response('late', { status: 200 })
        }
        if (url.pathname === '/redirect')
          return new Response(null, { status: 302, headers: { location: `${base}/internal` } })
        const left = failFirst.get(url.pathname) ?? 0
        if (url.pathname === '/down' || left > 0) {
          if (left > 0) failFirst.set(url.pathname, left - 1)
          hits.push({ id, path: url.pathname, body: null, at: Date.now(), verified })
          return new Response('unavailable', { status: 503 })
        }
        hits.push({ id, path: url.pathname, body: JSON.parse(text), at: Date.now(), verified })
        return new Response('ok')
      },
    })
    base = `http://127.0.0.1:${receiver.port}`
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,webhook,broker',
      env: { MMP_WEBHOOK_RETRY_SCHEDULE: '0s,300ms,600ms' },
    })
    operator = await p.login()
    await createTenants(p.gateway, operator, 'acme', 'beta')
    for (const [tenant, email] of [
      ['acme', 'admin@acme.test'],
      ['beta', 'admin@beta.test'],
    ] as const) {
      const r = await api(p.gateway, operator).post('/api/v1/auth/users', {
        tenant_id: tenant,
        email,
        role: 'Admin',
        password: 'admin-password-1',
      })
      expect(r.status).toBe(201)
    }
    acme = await p.login('admin@acme.test', 'admin-password-1')
    beta = await p.login('admin@beta.test', 'admin-password-1')
    const secrets = JSON.parse(readFileSync(join(p.dataDir, 'secrets.json'), 'utf8'))
    broker = await mqtt.connectAsync(`mqtt://127.0.0.1:${1883 + p.offset}`, {
      username: secrets.mqtt_username,
      password: secrets.mqtt_password,
    })
  }, 30_000)

  afterAll(async () => {
    release()
    await broker?.endAsync()
    await p?.dispose()
    receiver?.stop(true)
  })

  const register = async (token: string, path: string, events: string[], tenant_id?: string) => {
    const r = await api(p.gateway, token).post('/api/v1/webhooks', {
      ...(tenant_id ? { tenant_id } : {}),
      url: base + path,
      events,
      secret: SECRET,
    })
    expect(r.status).toBe(201)
    return r.body as { id: string }
  }
  const at = (path: string) => hits.filter((h) => h.path === path)

  it('turns a payment event into a verified payment.success delivery for its tenant only', async () => {
    await register(acme, '/acme', ['payment.success'], 'acme')
    // Other tests deliver to beta's endpoints too: this one's log is read by its endpoint.
    const betaEndpoint = await register(beta, '/beta', ['payment.success'])
    await publish('mobilemoney.transactions.success', 'acme', {
      transaction_id: 'txn_e2e_1',
      occurred_at: '2026-03-01T10:00:00Z',
      amount: 1500,
      direction: 'in',
      counterparty_phone: '254712345678',
      description: 'payment',
      receipt_number: 'QGH1234567',
      source: 'payment',
      checkout_request_id: 'ws_CO_1',
      account_reference: 'INV-1',
    })
    const hit = await eventually(() => at('/acme')[0], 10_000, 'acme delivery')
    expect(hit.verified).toBe(true)
    expect(Date.parse(hit.body.timestamp)).toBeGreaterThan(0)
    expect(hit.body).toMatchObject({
      id: hit.id,
      event: 'payment.success',
      version: 1,
      data: {
        transaction_id: 'txn_e2e_1',
        amount: 1500,
        phone_number: '254712345678',
        receipt_number: 'QGH1234567',
        checkout_request_id: 'ws_CO_1',
        account_reference: 'INV-1',
      },
    })
    // A later payment of beta's is handled after acme's (one consumer, in order): once beta's
    // own delivery is logged, a leaked copy of acme's would be logged before it.
    await publish('mobilemoney.transactions.success', 'beta', {
      transaction_id: 'txn_e2e_beta_marker',
      occurred_at: '2026-03-01T10:05:00Z',
      amount: 20,
      direction: 'in',
      counterparty_phone: '254712345679',
      description: 'payment',
      receipt_number: 'QGH7654321',
      source: 'payment',
      checkout_request_id: 'ws_CO_beta',
      account_reference: 'INV-2',
    })
    const log = await eventually(
      async () => {
        const r = await api(p.gateway, beta).get(
          `/api/v1/webhooks/deliveries?status=delivered&endpoint_id=${betaEndpoint.id}`,
        )
        return r.body.data?.length > 0 ? r.body.data : null
      },
      10_000,
      "beta's own delivery logged",
    )
    expect(log).toHaveLength(1)
    expect(at('/beta').map((h) => h.body.data.transaction_id)).toEqual(['txn_e2e_beta_marker'])
    expect(
      (await api(p.gateway, beta).get(`/api/v1/webhooks/deliveries?endpoint_id=${betaEndpoint.id}`))
        .body.data,
    ).toHaveLength(1)
  })

  it('retries a failing receiver on the schedule until it answers 2xx', async () => {
    const ep = await register(acme, '/flaky', ['low.balance.alert'])
    failFirst.set('/flaky', 2)
    await publish('mobilemoney.balance.low', 'acme', {
      balance: 100,
      threshold: 500,
      forecast_date: null,
      reason: 'below threshold',
    })
    await eventually(() => at('/flaky').length === 3, 10_000, 'three attempts')
    const times = at('/flaky').map((h) => h.at)
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(280)
    expect(times[1]! - times[0]!).toBeLessThan(1000)
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(580)
    expect(times[2]! - times[1]!).toBeLessThan(1500)
    expect(at('/flaky').every((h) => h.verified)).toBe(true)
    const log = await eventually(
      async () => {
        const r = await api(p.gateway, acme).get(
          `/api/v1/webhooks/deliveries?endpoint_id=${ep.id}&status=delivered`,
        )
        return r.body.data[0]
      },
      15_000,
      'the delivered log entry with its attempts',
    )
    expect(log.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 200])
  })

  it('dead-letters an always failing receiver and replays through the API and the CLI', async () => {
    const ep = await register(acme, '/down', ['statement.processed'])
    await publish('mobilemoney.statements.processed', 'acme', {
      import_id: 'imp_1',
      file_name: 'statement.csv',
      accepted: 10,
      duplicates: 0,
      rejected: 0,
    })
    const dead = await eventually(
      async () => {
        const r = await api(p.gateway, acme).get(
          `/api/v1/webhooks/deliveries?status=dead&endpoint_id=${ep.id}`,
        )
        return r.body.data[0]
      },
      15_000,
      'the dead-lettered delivery',
    )
    expect(dead.attempts).toHaveLength(3)
    expect(dead.attempts[0]).toMatchObject({ status_code: 503, response_excerpt: 'unavailable' })
    const replay = await api(p.gateway, acme).post(`/api/v1/webhooks/deliveries/${dead.id}/replay`)
    expect(replay.status).toBe(202)
    await eventually(() => at('/down').length === 6, 10_000, 'replayed attempts')
    await eventually(
      async () => {
        const r = await api(p.gateway, acme).get(`/api/v1/webhooks/deliveries/${dead.id}`)
        return r.body.status === 'dead'
      },
      15_000,
      'the replayed delivery dead again',
    )
    const cli = Bun.spawnSync(
      [
        process.execPath,
        join(root, 'cmd/main.ts'),
        'replay',
        'webhooks',
        '--dead',
        '--endpoint',
        ep.id,
        '--tenant',
        'acme',
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_PORT_OFFSET: String(p.offset),
          MMP_OPERATOR_EMAIL: 'operator@mmp.test',
          MMP_OPERATOR_PASSWORD: 'operator-test-password',
          NODE_ENV: 'production',
        },
      },
    )
    expect(cli.exitCode).toBe(0)
    expect(cli.stdout.toString() + cli.stderr.toString()).toContain('1 dead delivery queued again')
    await eventually(() => at('/down').length === 9, 10_000, 'CLI replayed attempts')
  })

  it('loses nothing and repeats no acknowledged delivery across a SIGKILL', async () => {
    const slow = await register(beta, '/slow', ['transaction.categorized'])
    hold = new Promise((r) => {
      release = r
    })
    const transactions = Array.from({ length: 1000 }, (_, i) => ({
      transaction_id: `txn_kill_${i}`,
      occurred_at: '2026-03-02T08:00:00Z',
      amount: i + 1,
      direction: 'in',
      description: `sale ${i}`,
      source: 'api',
      category: 'Revenue',
    }))
    await publish('mobilemoney.transactions.categorized', 'beta', { transactions })
    await eventually(() => held.size > 0, 10_000, 'first held delivery')
    await p.kill()
    hold = null
    release()
    await p.restart()
    const ids = await eventually(
      () => {
        const got = at('/slow')
        return new Set(got.map((h) => h.body.data.transaction_id)).size === 1000 ? got : null
      },
      30_000,
      'all 1000 deliveries',
    )
    const perMessage = new Map<string, number>()
    for (const h of ids) perMessage.set(h.id, (perMessage.get(h.id) ?? 0) + 1)
    expect(perMessage.size).toBe(1000)
    expect([...perMessage.values()].every((n) => n === 1)).toBe(true)
    expect(ids.every((h) => h.verified)).toBe(true)
    // Every delivery of the endpoint delivered (none pending or in flight) means no attempt is
    // left to come: each one's hit was recorded before its answer.
    const webhookDb = new Database(join(p.dataDir, 'platform', 'webhook.db'), { readonly: true })
    const unfinished = () =>
      webhookDb
        .query<{ n: number }, [string]>(
          "SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND status <> 'delivered'",
        )
        .get(slow.id)?.n
    await eventually(() => unfinished() === 0, 10_000, 'every /slow delivery marked delivered')
    webhookDb.close()
    expect(at('/slow')).toHaveLength(1000)
  }, 60_000)

  it('counts a redirect as a failure and never follows it', async () => {
    const ep = await register(acme, '/redirect', ['subscription.renewed'])
    await publish('mobilemoney.subscriptions.changed', 'acme', {
      plan: 'pro',
      previous_plan: 'pro',
      status: 'active',
      previous_status: 'active',
      reason: 'renewed',
      current_period_start: '2026-04-01T00:00:00Z',
      current_period_end: '2026-05-01T00:00:00Z',
    })
    const dead = await eventually(
      async () => {
        const r = await api(p.gateway, acme).get(
          `/api/v1/webhooks/deliveries?endpoint_id=${ep.id}&status=dead`,
        )
        return r.body.data[0]
      },
      15_000,
      'the redirected delivery dead-lettered',
    )
    expect(dead.event).toBe('subscription.renewed')
    expect(dead.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([
      302, 302, 302,
    ])
    expect(at('/internal')).toHaveLength(0)
  })

  it('republishes outbox events with mmp replay events', async () => {
    await register(acme, '/replayed', ['low.balance.alert'])
    const envelope = {
      id: 'evt_outbox_replay_1',
      type: 'mobilemoney.balance.low',
      version: 1,
      tenant_id: 'acme',
      occurred_at: new Date().toISOString(),
      data: { balance: 5, threshold: 10, forecast_date: null, reason: 'replayed' },
    }
    const db = new Database(join(p.dataDir, 'platform', 'webhook.db'))
    db.run('PRAGMA busy_timeout = 5000')
    db.query(
      'INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      envelope.id,
      envelope.type,
      'acme',
      JSON.stringify(envelope),
      envelope.occurred_at,
      envelope.occurred_at,
    )
    db.close()
    const cli = Bun.spawnSync(
      [
        process.execPath,
        join(root, 'cmd/main.ts'),
        'replay',
        'events',
        '--topic',
        'mobilemoney.balance.low',
        '--since',
        '10m',
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_PORT_OFFSET: String(p.offset),
          NODE_ENV: 'production',
        },
      },
    )
    expect(cli.stdout.toString() + cli.stderr.toString()).toContain('1 event(s)')
    const hit = await eventually(() => at('/replayed')[0], 10_000, 'replayed event delivery')
    expect(hit.body.data.reason).toBe('replayed')
  })

  it('counts deliveries in /metrics', async () => {
    const r = await fetch(`${p.gateway}/metrics`)
    if (r.status === 404) return // the gateway serves the registry once its metrics route lands
    expect(await r.text()).toContain('mmp_webhook_attempts_total')
  })
})
