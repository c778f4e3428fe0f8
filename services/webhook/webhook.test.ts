import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { topics } from '../../schema/events.ts'
import { migrations } from '../../schema/webhook/migrations.ts'
import { api } from '../../test/support/client.ts'
import type { ServiceInstance } from '../kernel/context.ts'
import type { Role } from '../kernel/roles.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import service from './index.ts'
import { purgeDelivered } from './queue-wide.ts'
import type { WebhookSettings } from './settings.ts'

interface Received {
  path: string
  headers: Record<string, string>
  body: string
  at: number
}

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const TEST_WEBHOOK_KEY = Buffer.alloc(32, 7).toString('base64')

describe('webhook service', () => {
  let kit: TestKit<WebhookSettings>
  let svc: ServiceInstance
  let receiver: ReturnType<typeof Bun.serve>
  const received: Received[] = []
  const failures = new Map<string, number>()
  let base: string

  beforeAll(async () => {
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url)
        const body = await req.text()
        received.push({
          path: url.pathname,
          headers: Object.fromEntries(req.headers),
          body,
          at: Date.now(),
        })
        if (url.pathname === '/gone') return new Response('bye', { status: 410 })
        // Points back at this receiver: a followed redirect would show up as a /redirected request.
        if (url.pathname === '/redirect')
          return new Response(null, { status: 302, headers: { location: `${base}/redirected` } })
        if (url.pathname === '/down') return new Response('nope', { status: 503 })
        const left = failures.get(url.pathname) ?? 0
        if (left > 0) {
          failures.set(url.pathname, left - 1)
          return new Response('try later', { status: 500 })
        }
        return new Response('ok')
      },
    })
    base = `http://127.0.0.1:${receiver.port}`
    kit = await createTestKit('webhook', {
      migrations,
      settings: {
        allowInsecure: true,
        allowHosts: [],
        retrySchedule: [0, 100, 200],
        timeoutMs: 2000,
        rateLimit: 500,
        maxInFlight: 32,
        secretKey: TEST_WEBHOOK_KEY,
      },
    })
    svc = await service.create(kit.ctx)
    await svc.start?.()
  })
  afterAll(async () => {
    await svc.stop?.()
    receiver.stop(true)
    kit.cleanup()
  })

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    tenantId = 'acme',
    role: Role = 'Admin',
  ) => api(svc.app, await kit.authFor({ tenantId, role })).request(method, path, body)
  const register = (path: string, events = ['payment.success'], tenant = 'acme') =>
    call(
      'POST',
      '/api/v1/webhooks',
      { tenant_id: tenant, url: base + path, events, secret: SECRET },
      tenant,
    )
  const deliveriesTo = (path: string) => received.filter((r) => r.path === path)

  it('registers an endpoint without echoing the secret and validates the body', async () => {
    const res = await register('/ok')
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      tenant_id: 'acme',
      url: `${base}/ok`,
      events: ['payment.success'],
      status: 'enabled',
      version: 1,
    })
    expect(res.body.id).toStartWith('whe_')
    expect(JSON.stringify(res.body)).not.toContain(SECRET)
    expect(
      (
        await call('POST', '/api/v1/webhooks', {
          tenant_id: 'acme',
          url: `${base}/x`,
          events: ['nope'],
          secret: SECRET,
        })
      ).status,
    ).toBe(422)
    expect(
      (
        await call('POST', '/api/v1/webhooks', {
          tenant_id: 'acme',
          url: 'https://10.0.0.1/x',
          events: ['payment.success'],
          secret: SECRET,
        })
      ).status,
    ).toBe(422)
    expect(
      (
        await call('POST', '/api/v1/webhooks', {
          tenant_id: 'other',
          url: `${base}/x`,
          events: ['payment.success'],
          secret: SECRET,
        })
      ).status,
    ).toBe(403)
    expect(
      (
        await call(
          'POST',
          '/api/v1/webhooks',
          { tenant_id: 'acme', url: `${base}/x`, events: ['payment.success'], secret: SECRET },
          'acme',
          'Manager',
        )
      ).status,
    ).toBe(403)
    const got = await call('GET', `/api/v1/webhooks/${res.body.id}`)
    expect(got.body.id).toBe(res.body.id)
    expect((await call('GET', `/api/v1/webhooks/${res.body.id}`, undefined, 'beta')).status).toBe(
      404,
    )
    const list = await call('GET', '/api/v1/webhooks')
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(res.body.id)
  })

  it('delivers a triggered event signed per Standard Webhooks', async () => {
    // A tenant of its own: the one endpoint it registers is the only one the trigger reaches.
    await register('/signed', ['payment.success'], 'signed-co')
    const res = await call(
      'POST',
      '/api/v1/webhooks/trigger',
      {
        event: 'payment.success',
        data: { transaction_id: 't1', amount: 12.5, phone_number: '254700000001' },
      },
      'signed-co',
    )
    expect(res.status).toBe(202)
    expect(res.body.deliveries).toHaveLength(1)
    const got = await eventually(() => deliveriesTo('/signed').find((r) => r.body.includes('"t1"')))
    const payload = new Webhook(SECRET).verify(got.body, got.headers) as Record<string, unknown>
    expect(payload).toMatchObject({
      event: 'payment.success',
      version: 1,
      data: { transaction_id: 't1', amount: 12.5 },
    })
    expect(payload.id).toBe(got.headers['webhook-id'])
    const log = await eventually(async () => {
      const l = await call(
        'GET',
        `/api/v1/webhooks/deliveries?event=payment.success&status=delivered`,
        undefined,
        'signed-co',
      )
      return l.body.data.find((d: { id: string }) => d.id === res.body.deliveries[0])
    })
    expect(log.attempts).toHaveLength(1)
    expect(log.attempts[0]).toMatchObject({ status_code: 200, response_excerpt: 'ok', error: null })
  })

  it('retries on the schedule and then succeeds', async () => {
    const ep = await register('/flaky', ['subscription.renewed'])
    failures.set('/flaky', 2)
    const res = await call('POST', '/api/v1/webhooks/trigger', {
      event: 'subscription.renewed',
      data: { n: 1 },
    })
    const id = res.body.deliveries[0]
    // The 2xx is made durable at once (one statement) and its attempt row follows in the next
    // batched commit, so the log is awaited until the last attempt is in it.
    const d = await eventually(async () => {
      const r = await call('GET', `/api/v1/webhooks/deliveries/${id}`)
      return r.body.status === 'delivered' && r.body.attempts.length === 3 ? r.body : null
    })
    expect(d.endpoint_id).toBe(ep.body.id)
    expect(d.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200])
    const times = deliveriesTo('/flaky').map((r) => r.at)
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(95)
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(195)
    await call('DELETE', `/api/v1/webhooks/${ep.body.id}`)
  })

  it('ends dead after the last attempt and replays', async () => {
    const ep = await register('/down', ['low.balance.alert'])
    const res = await call('POST', '/api/v1/webhooks/trigger', {
      event: 'low.balance.alert',
      data: { balance: 1 },
    })
    const id = res.body.deliveries[0]
    const dead = await eventually(async () => {
      const r = await call(
        'GET',
        `/api/v1/webhooks/deliveries?status=dead&endpoint_id=${ep.body.id}`,
      )
      return r.body.data[0]
    })
    expect(dead.id).toBe(id)
    expect(dead.attempts).toHaveLength(3)
    const replay = await call('POST', `/api/v1/webhooks/deliveries/${id}/replay`)
    expect(replay.status).toBe(202)
    await eventually(
      async () =>
        (await call('GET', `/api/v1/webhooks/deliveries/${id}`)).body.attempts.length === 6,
    )
    const many = await call('POST', '/api/v1/webhooks/deliveries/replay', {
      endpoint_id: ep.body.id,
    })
    expect(many.status).toBe(202)
    await call('DELETE', `/api/v1/webhooks/${ep.body.id}`)
  })

  it('disables an endpoint that answers 410 and fails redirects', async () => {
    const gone = await register('/gone', ['statement.processed'])
    const redirect = await register('/redirect', ['statement.processed'])
    await call('POST', '/api/v1/webhooks/trigger', { event: 'statement.processed', data: {} })
    await eventually(
      async () =>
        (await call('GET', `/api/v1/webhooks/${gone.body.id}`)).body.status === 'disabled',
    )
    const r = await eventually(async () => {
      const l = await call(
        'GET',
        `/api/v1/webhooks/deliveries?endpoint_id=${redirect.body.id}&status=dead`,
      )
      return l.body.data[0]
    })
    expect(r.attempts[0].error).toContain('redirect')
    expect(deliveriesTo('/redirected')).toHaveLength(0)
    await call('DELETE', `/api/v1/webhooks/${gone.body.id}`)
    await call('DELETE', `/api/v1/webhooks/${redirect.body.id}`)
  })

  it("delivers broker events to the event's tenant only", async () => {
    const a = await register('/tenant-a', ['transaction.categorized'], 'acme')
    const b = await register('/tenant-b', ['transaction.categorized'], 'beta')
    const tx = (id: string) => ({
      transaction_id: id,
      occurred_at: '2026-01-01T00:00:00Z',
      amount: 5,
      direction: 'in',
      description: 'x',
      source: 'api',
      category: 'Revenue',
    })
    const event = {
      id: 'evt_1',
      type: topics.transactionsCategorized,
      version: 1,
      tenant_id: 'beta',
      occurred_at: '2026-01-01T00:00:00Z',
      data: { transactions: [tx('b1'), tx('b2')] },
    }
    await kit.bus.publish(topics.transactionsCategorized, event)
    await kit.bus.publish(topics.transactionsCategorized, event)
    // The memory bus returns once the consumer has queued what it will deliver, so the queue
    // itself shows nothing more is coming: two deliveries for beta, none for acme.
    const queued = async (endpoint: string, tenant: string) =>
      (await call('GET', `/api/v1/webhooks/deliveries?endpoint_id=${endpoint}`, undefined, tenant))
        .body.data as Array<{ status: string }>
    expect(await queued(b.body.id, 'beta')).toHaveLength(2)
    expect(await queued(a.body.id, 'acme')).toHaveLength(0)
    await eventually(async () =>
      (await queued(b.body.id, 'beta')).every((d) => d.status === 'delivered'),
    )
    expect(deliveriesTo('/tenant-b')).toHaveLength(2)
    expect(deliveriesTo('/tenant-a')).toHaveLength(0)
    expect(JSON.parse(deliveriesTo('/tenant-b')[0]!.body)).toMatchObject({
      event: 'transaction.categorized',
      data: { transaction_id: 'b1', category: 'Revenue' },
    })
    await call('DELETE', `/api/v1/webhooks/${a.body.id}`, undefined, 'acme')
    await call('DELETE', `/api/v1/webhooks/${b.body.id}`, undefined, 'beta')
  })

  it('keeps signing with the old secret for a while after a rotation', async () => {
    const ep = await register('/rotated', ['payment.failed'])
    const rotated = await call('POST', `/api/v1/webhooks/${ep.body.id}/rotate-secret`, {})
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toStartWith('whsec_')
    await call('POST', '/api/v1/webhooks/trigger', { event: 'payment.failed', data: { x: 1 } })
    const got = await eventually(() => deliveriesTo('/rotated')[0])
    expect(new Webhook(SECRET).verify(got.body, got.headers)).toBeTruthy()
    expect(new Webhook(rotated.body.secret).verify(got.body, got.headers)).toBeTruthy()
    await call('DELETE', `/api/v1/webhooks/${ep.body.id}`)
  })

  it('keeps the url as given, lists across tenants for the operator and deletes with 204', async () => {
    const created = await call('POST', '/api/v1/webhooks', {
      url: base,
      events: ['payment.success'],
      secret: 'a-plain-secret-of-32-bytes-length',
    })
    expect(created.body.url).toBe(base)
    const all = await call('GET', '/api/v1/webhooks', undefined, 'platform')
    expect(all.body.data.map((e: { tenant_id: string }) => e.tenant_id)).toContain('acme')
    const trig = await call('POST', '/api/v1/webhooks/trigger', { event: 'payment.success' })
    expect(trig.status).toBe(202)
    expect((await call('DELETE', `/api/v1/webhooks/${created.body.id}`)).status).toBe(204)
    expect((await call('GET', `/api/v1/webhooks/${created.body.id}`)).status).toBe(404)
  })

  it('purges delivered deliveries past the retention and keeps dead ones', async () => {
    // A tenant of its own with one delivered and one dead delivery to tell apart.
    const tenant = 'purge-co'
    const ok = await register('/purge-ok', ['payment.success'], tenant)
    const down = await register('/down', ['payment.failed'], tenant)
    for (const event of ['payment.success', 'payment.failed'])
      await call('POST', '/api/v1/webhooks/trigger', { event, data: {} }, tenant)
    const listed = async (status: string) =>
      (await call('GET', `/api/v1/webhooks/deliveries?status=${status}`, undefined, tenant)).body
        .data as unknown[]
    await eventually(async () => (await listed('delivered')).length === 1, 10_000, 'a delivery')
    await eventually(async () => (await listed('dead')).length === 1, 10_000, 'a dead delivery')
    const deps = { db: kit.registry.platform('webhook'), clock: kit.ctx.clock } as never
    expect(purgeDelivered(deps, -60_000)).toBeGreaterThanOrEqual(1)
    expect(await listed('delivered')).toHaveLength(0)
    expect(await listed('dead')).toHaveLength(1)
    await call('DELETE', `/api/v1/webhooks/${ok.body.id}`, undefined, tenant)
    await call('DELETE', `/api/v1/webhooks/${down.body.id}`, undefined, tenant)
  })
})
