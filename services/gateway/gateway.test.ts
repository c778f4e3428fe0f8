import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { CircuitState } from 'cockatiel'
import { exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { type ServiceName, serviceNames } from '../kernel/context.ts'
import { createServiceClient, type Discovery, staticDiscovery } from '../kernel/http-client.ts'
import { createLogger } from '../kernel/log.ts'
import { createTokenVerifier } from '../kernel/tokens.ts'
import { WindowBreaker } from './breaker.ts'
import { createGateway } from './index.ts'
import { createRateLimiter } from './rate-limit.ts'
import { routedServices, routeLabel, serviceFor } from './routes.ts'
import { traceparentFor } from './trace.ts'

describe('token buckets', () => {
  it('allows rate × burst at once, refuses the next with a retry time, and refills', () => {
    let now = 0
    const rl = createRateLimiter({ now: () => now })
    for (let i = 0; i < 10; i++) expect(rl.take('acme', 5, 2).ok).toBe(true)
    const refused = rl.take('acme', 5, 2)
    expect(refused).toMatchObject({ ok: false, limit: 10, remaining: 0, retryAfter: 1 })
    expect(rl.take('beta', 5, 2).ok).toBe(true)
    now += 200
    expect(rl.take('acme', 5, 2)).toMatchObject({ ok: true, remaining: 0 })
    now += 10_000
    expect(rl.peek('acme', 5, 2)).toMatchObject({ ok: true, remaining: 10, reset: 0 })
  })
})

describe('window breaker', () => {
  it('opens only past the minimum volume and the threshold, forgetting old buckets', () => {
    let now = 100_000
    const b = new WindowBreaker({ threshold: 0.5, minRequests: 4, windowMs: 10_000 }, () => now)
    expect(b.failure(CircuitState.Closed)).toBe(false)
    expect(b.failure(CircuitState.Closed)).toBe(false)
    b.success(CircuitState.Closed)
    expect(b.failure(CircuitState.Closed)).toBe(true)
    now += 60_000
    expect(b.failure(CircuitState.Closed)).toBe(false)
    b.success(CircuitState.Closed)
    b.success(CircuitState.Closed)
    expect(b.failure(CircuitState.Closed)).toBe(false)
  })
})

describe('routes', () => {
  it('routes to every service the kernel knows, by the manifest’s segments', () => {
    expect([...routedServices].sort()).toEqual([...serviceNames].sort())
    expect(serviceFor('/api/v1/statements')).toBe('parser')
    expect(serviceFor('/api/v1/categorize/rules/r1')).toBe('categorizer')
    expect(serviceFor('/api/v1/nothing')).toBeUndefined()
    expect(serviceFor('/health')).toBeUndefined()
  })

  it('labels routes without ids, a tenant id included', () => {
    expect(routeLabel('/api/v1/payments/status/ws_CO_123')).toBe('/api/v1/payments/status')
    expect(routeLabel('/api/v1/webhooks/whe_0192')).toBe('/api/v1/webhooks/:id')
    expect(routeLabel('/api/v1/tenants/acme')).toBe('/api/v1/tenants/:id')
    expect(routeLabel('/api/v1/analytics')).toBe('/api/v1/analytics')
    expect(routeLabel('/api/v1/nothing/x')).toBe('unknown')
  })
})

describe('traceparent', () => {
  it('keeps a valid trace id with a new parent span, or starts a trace from the request id', () => {
    const kept = traceparentFor('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'r')
    expect(kept).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/)
    expect(kept).not.toContain('00f067aa0ba902b7')
    const id = Bun.randomUUIDv7()
    expect(traceparentFor('garbage', id)).toStartWith(`00-${id.replaceAll('-', '')}-`)
    expect(traceparentFor(`00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, 'x-1')).toMatch(
      /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/,
    )
  })
})

describe('static discovery', () => {
  it('rotates instances, skips a failing one with growing back-off, and takes it back', () => {
    let now = 0
    const d = staticDiscovery(
      { analytics: ['http://a', 'http://b', 'http://c'] },
      { now: () => now },
    )
    expect(['http://a', 'http://b', 'http://c', 'http://a'].map(() => d.pick('analytics'))).toEqual(
      ['http://a', 'http://b', 'http://c', 'http://a'],
    )
    d.report?.('analytics', 'http://b', false)
    expect([1, 2, 3, 4].map(() => d.pick('analytics'))).toEqual([
      'http://c',
      'http://a',
      'http://c',
      'http://a',
    ])
    expect(d.status?.('analytics')).toEqual([
      { url: 'http://a', healthy: true },
      { url: 'http://b', healthy: false },
      { url: 'http://c', healthy: true },
    ])
    now += 1000
    expect([1, 2, 3].map(() => d.pick('analytics'))).toContain('http://b')
    d.report?.('analytics', 'http://b', false)
    now += 1500
    expect(d.status?.('analytics')?.[1]?.healthy).toBe(false)
    d.report?.('analytics', 'http://b', true)
    expect(d.status?.('analytics')?.[1]?.healthy).toBe(true)
  })

  it('tries the instance that failed longest ago when all are down, and 503s an unknown service', () => {
    let now = 0
    const d = staticDiscovery({ billing: ['http://a', 'http://b'] }, { now: () => now })
    d.report?.('billing', 'http://b', false)
    now = 10
    d.report?.('billing', 'http://a', false)
    expect(d.pick('billing')).toBe('http://b')
    expect(() => d.pick('payment')).toThrow('no instance of payment')
  })
})

describe('gateway handler', () => {
  const calls: Array<{ path: string; headers: Record<string, string>; body: string }> = []
  let upstream: ReturnType<typeof Bun.serve>
  let sign: (claims: Record<string, unknown>) => Promise<string>
  let gateway: ReturnType<typeof createGateway>
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  const log = createLogger('gateway-test')
  log.level = -999
  const client = (ip: string) => ({ requestIP: () => ({ address: ip }) })

  beforeAll(async () => {
    upstream = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const body = await request.text()
        calls.push({
          path: new URL(request.url).pathname,
          headers: Object.fromEntries(request.headers),
          body,
        })
        return Response.json({ ok: true })
      },
    })
    keys = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const { privateKey, publicKey } = keys
    const tokens = await createTokenVerifier(await exportSPKI(publicKey), {
      issuer: 'mmp',
      audience: 'mmp',
      clockToleranceSec: 5,
    })
    sign = (claims) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'EdDSA' })
        .setIssuer('mmp')
        .setAudience('mmp')
        .setSubject('usr_1')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey)
    // A discovery source other than the static one: any object with pick and instances.
    const closed = 'http://127.0.0.1:9'
    let turn = 0
    const custom: Discovery = {
      pick: (s: ServiceName) =>
        s === 'analytics' ? [closed, upstream.url.origin][turn++ % 2]! : upstream.url.origin,
      instances: () => [closed, upstream.url.origin],
    }
    gateway = createGateway({
      discovery: custom,
      tokens,
      log,
      version: 'test',
      timeoutMs: 1000,
      rates: { free: 100, pro: 100, enterprise: 100, burstFactor: 1, perIp: 2 },
      bodyLimit: 1024,
      accessLog: 'off',
    })
  })
  afterAll(() => upstream.stop(true))

  const call = (path: string, init: RequestInit = {}, ip = '10.0.0.1') =>
    gateway.fetch(new Request(`http://gw${path}`, init), client(ip))

  it('limits unauthenticated routes per client IP', async () => {
    const login = () => call('/api/v1/auth/login', { method: 'POST', body: '{}' }, '10.9.9.9')
    expect((await login()).status).toBe(200)
    expect((await login()).status).toBe(200)
    const third = await login()
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toBe('1')
    expect(
      (await call('/api/v1/auth/login', { method: 'POST', body: '{}' }, '10.9.9.8')).status,
    ).toBe(200)
  })

  it('lets provider callbacks through past the per-IP limit', async () => {
    const callback = () =>
      call('/api/v1/payments/callback?sig=x', { method: 'POST', body: '{}' }, '10.7.7.7')
    const statuses = [await callback(), await callback(), await callback(), await callback()].map(
      (r) => r.status,
    )
    expect(statuses).toEqual([200, 200, 200, 200])
  })

  it('checks the tenant of a JSON body and forwards the bytes unchanged', async () => {
    const token = await sign({ tenant_id: 'acme', role: 'Admin' })
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const other = await call('/api/v1/billing/usage/record', {
      method: 'POST',
      headers,
      body: JSON.stringify({ tenant_id: 'beta', metric: 'api_calls' }),
    })
    expect(other.status).toBe(403)
    const body = JSON.stringify({ tenant_id: 'acme', note: 'héllo' })
    const own = await call('/api/v1/billing/usage/record', { method: 'POST', headers, body })
    expect(own.status).toBe(200)
    expect(calls.at(-1)).toMatchObject({ path: '/api/v1/billing/usage/record', body })
    expect(calls.at(-1)!.headers['x-tenant-id']).toBe('acme')
    const arrayBody = await call('/api/v1/categorize', {
      method: 'POST',
      headers,
      body: JSON.stringify([{ tenant_id: 'beta' }]),
    })
    expect(arrayBody.status).toBe(200)
  })

  it('refuses a streamed body past the limit with 413', async () => {
    const token = await sign({ tenant_id: 'acme', role: 'Admin' })
    const res = await call('/api/v1/billing/usage/record', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify({ pad: 'x'.repeat(2000) })]).stream(),
    })
    expect(res.status).toBe(413)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
  })

  it('tries another instance when one refuses the connection', async () => {
    const token = await sign({ tenant_id: 'acme', role: 'Admin' })
    for (let i = 0; i < 4; i++) {
      const res = await call('/api/v1/analytics/summary', {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.status).toBe(200)
    }
  })

  it('passes the deadline on through the service client', async () => {
    const served = new Request('http://svc/x', {
      headers: {
        'x-request-deadline': String(Date.now() + 5000),
        'x-request-id': 'req-deadline-1',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    })
    const svc = createServiceClient(staticDiscovery({ billing: [upstream.url.origin] }))
    await svc.call('billing', '/api/v1/billing/plans', { from: served })
    expect(calls.at(-1)!.headers).toMatchObject({
      'x-request-deadline': served.headers.get('x-request-deadline'),
      'x-request-id': 'req-deadline-1',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    })
    const late = new Request('http://svc/x', { headers: { 'x-request-deadline': '1000' } })
    await expect(
      svc.call('billing', '/api/v1/billing/plans', { from: late }),
    ).rejects.toMatchObject({
      code: 'TIMEOUT',
    })
  })

  it('dispatches in-process with the same headers and deadline as over the network', async () => {
    const seen: Request[] = []
    // The slow upstream answers only when the test lets it: a 504 before that is the budget's.
    let releaseSlow = () => {}
    const slow = new Promise<void>((resolve) => {
      releaseSlow = resolve
    })
    const local = createGateway({
      discovery: staticDiscovery({}),
      tokens: await createTokenVerifier(await exportSPKI(keys.publicKey), {
        issuer: 'mmp',
        audience: 'mmp',
        clockToleranceSec: 5,
      }),
      log,
      version: 'test',
      timeoutMs: 1000,
      accessLog: 'off',
      local: {
        payment: {
          async handle(request) {
            seen.push(request)
            const path = new URL(request.url).pathname
            if (path.endsWith('/slow')) await slow
            // Busy without yielding: the timer cannot fire before the answer is ready.
            if (path.endsWith('/busy')) Bun.sleepSync(30)
            if (path.endsWith('/disk'))
              throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })
            return Response.json({ ok: true })
          },
        },
      },
    })
    const token = await sign({ tenant_id: 'acme', role: 'Viewer' })
    const ok = await local.fetch(
      new Request('http://gw/api/v1/payments/status/x?y=1', {
        headers: { authorization: `Bearer ${token}`, 'x-user-role': 'Admin' },
      }),
      client('10.0.0.2'),
    )
    expect(ok.status).toBe(200)
    expect(ok.headers.get('ratelimit-limit')).toBe('40')
    expect(seen[0]!.url).toBe('http://payment.local/api/v1/payments/status/x?y=1')
    expect(seen[0]!.headers.get('x-user-role')).toBe('Viewer')
    expect(Number(seen[0]!.headers.get('x-request-deadline'))).toBeGreaterThan(Date.now())
    const started = performance.now()
    const late = await local.fetch(
      new Request('http://gw/api/v1/payments/slow', {
        headers: { authorization: `Bearer ${token}`, 'x-request-timeout': '100' },
      }),
      client('10.0.0.2'),
    )
    expect(late.status).toBe(504)
    // Not before the 100 ms the client asked for (timers may fire a millisecond early).
    expect(performance.now() - started).toBeGreaterThanOrEqual(95)
    releaseSlow()
    const spent = await local.fetch(
      new Request('http://gw/api/v1/payments/busy', {
        headers: { authorization: `Bearer ${token}`, 'x-request-timeout': '1' },
      }),
      client('10.0.0.2'),
    )
    expect(spent.status).toBe(504)
    expect(await spent.json()).toMatchObject({ status: 504, code: 'TIMEOUT' })
    const disk = await local.fetch(
      new Request('http://gw/api/v1/payments/disk', {
        headers: { authorization: `Bearer ${token}` },
      }),
      client('10.0.0.2'),
    )
    expect(disk.status).toBe(503)
    expect(disk.headers.get('retry-after')).toBe('1')
    expect(await disk.json()).toMatchObject({ code: 'STORAGE_UNAVAILABLE' })
  })
})

describe('paths and budgets', () => {
  it('checks the tenant of an escaped or dotted path as the upstream will read it', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' })
    const log = createLogger('gateway-test')
    log.level = -999
    const seen: string[] = []
    const gw = createGateway({
      discovery: staticDiscovery({}),
      tokens: await createTokenVerifier(await exportSPKI(publicKey), {
        issuer: 'mmp',
        audience: 'mmp',
        clockToleranceSec: 5,
      }),
      log,
      version: 'test',
      timeoutMs: 1000,
      accessLog: 'off',
      local: {
        billing: {
          handle: async (r) => {
            seen.push(r.url)
            return new Response('{}')
          },
        },
      },
    })
    const token = await new SignJWT({ tenant_id: 'acme', role: 'Admin' })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('mmp')
      .setAudience('mmp')
      .setSubject('usr_1')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey)
    const get = (path: string) =>
      gw.fetch(new Request(`http://gw${path}`, { headers: { authorization: `Bearer ${token}` } }))
    expect((await get('/api/v1/billing/usage/%62eta')).status).toBe(403)
    expect((await get('/api/v1/billing/x/../usage/beta')).status).toBe(403)
    expect((await get('/api/v1/billing/plans?tenant%5Fid=beta')).status).toBe(403)
    expect((await get('/api/v1/billing/usage/%61cme')).status).toBe(200)
    expect(seen.at(-1)).toBe('http://billing.local/api/v1/billing/usage/%61cme')
  })

  it('shortens the budget to the client’s timeout or deadline', async () => {
    const { budgetOf } = await import('./index.ts')
    expect(budgetOf(null, null, 10_000)).toBe(10_000)
    expect(budgetOf('200', null, 10_000)).toBe(200)
    expect(budgetOf('99999', null, 10_000)).toBe(10_000)
    expect(budgetOf('abc', null, 10_000)).toBe(10_000)
    const soon = budgetOf(null, String(Date.now() + 500), 10_000)
    expect(soon).toBeGreaterThan(400)
    expect(soon).toBeLessThanOrEqual(500)
    expect(budgetOf(null, '1000', 10_000)).toBeLessThan(0)
  })
})
