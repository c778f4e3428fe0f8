import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { migrations } from '../../schema/webhook/migrations.ts'
import type { ServiceInstance } from '../kernel/context.ts'
import type { Role } from '../kernel/roles.ts'
import { createTestKit, type TestKit } from '../kernel/testing.ts'
import service from './index.ts'
import type { WebhookSettings } from './settings.ts'

/** Every webhook route: unauthenticated → 401, non-Admin roles → 403, another tenant → 403/404. */
describe('webhook routes security', () => {
  let kit: TestKit<WebhookSettings>
  let svc: ServiceInstance
  let endpointId: string
  let deliveryId: string

  const call = async (
    method: string,
    path: string,
    body: unknown,
    who: { tenantId: string; role: Role } | null,
  ) => {
    const res = await svc.app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: {
          ...(who ? await kit.authFor(who) : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      }),
    )
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  beforeAll(async () => {
    kit = await createTestKit('webhook', {
      migrations,
      settings: {
        allowInsecure: true,
        allowHosts: [],
        retrySchedule: [0],
        timeoutMs: 10_000,
        rateLimit: 500,
        maxInFlight: 32,
        secretKey: Buffer.alloc(32, 7).toString('base64'),
      },
    })
    svc = await service.create(kit.ctx)
    const admin = { tenantId: 'acme', role: 'Admin' as const }
    const ep = await call(
      'POST',
      '/api/v1/webhooks',
      {
        url: 'http://127.0.0.1:9/hook',
        events: ['payment.success'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      },
      admin,
    )
    endpointId = ep.body.id
    const trig = await call('POST', '/api/v1/webhooks/trigger', { event: 'payment.success' }, admin)
    deliveryId = trig.body.deliveries[0]
  })
  afterAll(() => kit.cleanup())

  const routes = () =>
    [
      [
        'POST',
        '/api/v1/webhooks',
        {
          url: 'http://127.0.0.1:9/x',
          events: ['payment.failed'],
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        },
      ],
      ['GET', '/api/v1/webhooks', undefined],
      ['GET', `/api/v1/webhooks/${endpointId}`, undefined],
      ['PATCH', `/api/v1/webhooks/${endpointId}`, { status: 'disabled' }],
      ['POST', `/api/v1/webhooks/${endpointId}/rotate-secret`, {}],
      ['DELETE', `/api/v1/webhooks/${endpointId}`, undefined],
      ['POST', '/api/v1/webhooks/trigger', { event: 'payment.success', data: {} }],
      ['GET', '/api/v1/webhooks/deliveries', undefined],
      ['GET', `/api/v1/webhooks/deliveries/${deliveryId}`, undefined],
      ['POST', `/api/v1/webhooks/deliveries/${deliveryId}/replay`, undefined],
      ['POST', '/api/v1/webhooks/deliveries/replay', {}],
    ] as const

  it('answers 401 without a token on every route', async () => {
    for (const [method, path, body] of routes())
      expect([method, path, (await call(method, path, body, null)).status]).toEqual([
        method,
        path,
        401,
      ])
  })

  it('answers 403 to every role but Admin on every route', async () => {
    for (const role of ['Manager', 'Analyst', 'Viewer'] as const)
      for (const [method, path, body] of routes())
        expect([
          role,
          method,
          path,
          (await call(method, path, body, { tenantId: 'acme', role })).status,
        ]).toEqual([role, method, path, 403])
  })

  it("hides another tenant's endpoints and deliveries", async () => {
    const beta = { tenantId: 'beta', role: 'Admin' as const }
    for (const [method, path, body] of routes().slice(2, 6))
      expect([method, path, (await call(method, path, body, beta)).status]).toEqual([
        method,
        path,
        404,
      ])
    for (const [method, path] of [
      ['GET', `/api/v1/webhooks/deliveries/${deliveryId}`],
      ['POST', `/api/v1/webhooks/deliveries/${deliveryId}/replay`],
    ] as const)
      expect((await call(method, path, undefined, beta)).status).toBe(404)
    expect((await call('GET', '/api/v1/webhooks', undefined, beta)).body.data).toEqual([])
    expect((await call('GET', '/api/v1/webhooks/deliveries', undefined, beta)).body.data).toEqual(
      [],
    )
    expect((await call('GET', '/api/v1/webhooks?tenant_id=acme', undefined, beta)).status).toBe(403)
    expect(
      (
        await call(
          'POST',
          '/api/v1/webhooks/trigger',
          { tenant_id: 'acme', event: 'payment.success' },
          beta,
        )
      ).status,
    ).toBe(403)
    expect(
      (await call('POST', '/api/v1/webhooks/deliveries/replay', { tenant_id: 'acme' }, beta))
        .status,
    ).toBe(403)
  })

  it('refuses an endpoint past the plan limit with 402', async () => {
    const { writeEntitlements } = await import('../kernel/entitlements.ts')
    writeEntitlements(kit.registry, 'gamma', {
      plan: 'free',
      status: 'active',
      period_start: '2026-01-01T00:00:00Z',
      period_end: '2026-02-01T00:00:00Z',
      limits: { webhook_endpoints: 1 },
      used: {},
      updated_at: '2026-01-01T00:00:00Z',
    })
    const gamma = { tenantId: 'gamma', role: 'Admin' as const }
    const body = {
      url: 'http://127.0.0.1:9/g',
      events: ['payment.success'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }
    expect((await call('POST', '/api/v1/webhooks', body, gamma)).status).toBe(201)
    const second = await call('POST', '/api/v1/webhooks', body, gamma)
    expect(second.status).toBe(402)
    expect(second.body.code).toBe('LIMIT_EXCEEDED')
    const usage = await call('GET', '/api/v1/webhooks/usage', undefined, {
      tenantId: 'gamma',
      role: 'Viewer',
    })
    expect(usage.body).toEqual({ tenant_id: 'gamma', webhook_endpoints: { used: 1, limit: 1 } })
  })
})
