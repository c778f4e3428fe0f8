import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { importPKCS8, SignJWT } from 'jose'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { budgetMs, referenceMs, timed } from './support/timing.ts'

/** How long the slow upstream takes to answer: far beyond any deadline the tests ask for. */
const SLOW_UPSTREAM_MS = 10_000

/** A stand-in upstream the test starts, stops and slows down; it records what it was sent. */
function fakeUpstream(opts: { delayMs?: number } = {}) {
  const seen: Array<Record<string, string>> = []
  let server: ReturnType<typeof Bun.serve> | null = null
  let port = 0
  const start = () => {
    server = Bun.serve({
      port,
      hostname: '127.0.0.1',
      async fetch(request) {
        const path = new URL(request.url).pathname
        if (!path.startsWith('/api/')) return Response.json({ openapi: '3.1.0', paths: {} })
        seen.push(Object.fromEntries(request.headers))
        if (opts.delayMs) await Bun.sleep(opts.delayMs)
        // Marked so the contract check skips answers no real service gave.
        return Response.json({ ok: true, path }, { headers: { 'x-test-fake-upstream': '1' } })
      },
    })
    port = server.port ?? 0
  }
  start()
  return {
    seen,
    get url() {
      return `http://127.0.0.1:${port}`
    },
    start,
    async stop() {
      await server?.stop(true)
      server = null
    },
  }
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')

describe('gateway edge', () => {
  let p: TestPlatform
  let operator: string
  const flaky = fakeUpstream()
  const slow = fakeUpstream({ delayMs: SLOW_UPSTREAM_MS })
  let privateKey: CryptoKey
  const tokenFor = async (claims: Record<string, unknown>, expiresIn = 900) => {
    const iat = Math.floor(Date.now() / 1000)
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('mmp')
      .setAudience('mmp')
      .setSubject((claims.sub as string) ?? 'usr_test')
      .setIssuedAt(iat - (expiresIn < 0 ? 3600 : 0))
      .setExpirationTime(iat + expiresIn)
      .sign(privateKey)
  }
  const userToken = (tenant: string, role = 'Admin') =>
    tokenFor({ tenant_id: tenant, role, sub: `usr_${tenant}` })

  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,broker,tenant',
      env: {
        MMP_RATE_LIMIT_FREE: '5',
        MMP_RATE_LIMIT_PRO: '100',
        MMP_RATE_LIMIT_ENTERPRISE: '500',
        MMP_RATE_LIMIT_IP: '20',
        MMP_DISCOVERY_WEBHOOK: flaky.url,
        MMP_DISCOVERY_CASHFLOW: slow.url,
        MMP_BREAKER_MIN_REQUESTS: '5',
        MMP_BREAKER_HALF_OPEN_MS: '1000',
      },
    })
    operator = await p.login()
    await createTenants(
      p.gateway,
      operator,
      ...[
        'acme',
        'other',
        'bursty',
        'calm',
        'direct',
        'tenant-a',
        'tenant-b',
        'viewers',
        'metered',
      ],
    )
    privateKey = (await importPKCS8(
      readFileSync(join(p.dataDir, 'keys', 'jwt-private.pem'), 'utf8'),
      'EdDSA',
    )) as CryptoKey
    // A platform start and eight tenants: more than the default 5 s on a busy 2-core box.
  }, 60_000)
  afterAll(async () => {
    await p.dispose()
    await flaky.stop()
    await slow.stop()
  })

  it('refuses missing, expired, tampered, alg:none and HS256-with-the-public-key tokens', async () => {
    const good = await userToken('acme')
    const [h, body, sig] = good.split('.')
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString())
    const publicPem = readFileSync(join(p.dataDir, 'keys', 'jwt-public.pem'))
    const hs256 = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new Uint8Array(publicPem))
    const bad = {
      missing: undefined,
      expired: await tokenFor({ tenant_id: 'acme', role: 'Admin' }, -60),
      tampered: `${h}.${b64({ ...claims, role: 'Admin', tenant_id: 'other' })}.${sig}`,
      alg_none: `${b64({ alg: 'none', typ: 'JWT' })}.${body}.`,
      hs256_public_key: hs256,
    }
    expect((await api(p.gateway, good).get('/api/v1/auth/me')).status).toBe(200)
    for (const [name, token] of Object.entries(bad)) {
      const res = await api(p.gateway, token).get('/api/v1/auth/me')
      expect({ name, status: res.status }).toEqual({ name, status: 401 })
      expect(res.body).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  it('replaces forged identity headers with the token’s', async () => {
    const created = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'viewers',
      email: 'v@viewers.test',
      role: 'Viewer',
      password: 'viewer-password-1',
    })
    expect(created.status).toBe(201)
    const viewer = await p.login('v@viewers.test', 'viewer-password-1')
    const forged = { 'x-user-role': 'Admin', 'x-tenant-id': 'platform', 'x-user-id': 'usr_x' }
    const me = await api(p.gateway, viewer, forged).get('/api/v1/auth/me')
    expect(me.status).toBe(200)
    expect(me.body).toEqual({ user_id: created.body.id, tenant_id: 'viewers', role: 'Viewer' })
    expect((await api(p.gateway, viewer, forged).get('/api/v1/auth/users')).status).toBe(403)
  })

  it('makes a direct call to a service port verify the token itself', async () => {
    const auth = p.url('auth')
    expect((await api(auth).get('/api/v1/auth/me')).status).toBe(401)
    expect((await api(auth, 'not-a-jwt').get('/api/v1/auth/me')).status).toBe(401)
    const viewer = await userToken('direct', 'Viewer')
    expect((await api(auth, viewer).get('/api/v1/auth/me')).status).toBe(200)
    const forged = await api(auth, viewer, { 'x-user-role': 'Admin' }).get('/api/v1/auth/me')
    expect(forged.status).toBe(403)
  })

  it('refuses a path, query or body naming another tenant with 403, except for the operator', async () => {
    const a = await userToken('tenant-a')
    for (const path of [
      '/api/v1/tenants/tenant-b',
      '/api/v1/billing/subscriptions/tenant-b',
      '/api/v1/billing/usage/tenant-b',
      '/api/v1/cashflow/summary/tenant-b',
      '/api/v1/auth/users?tenant_id=tenant-b',
    ]) {
      const res = await api(p.gateway, a).get(path)
      expect({ path, status: res.status }).toEqual({ path, status: 403 })
      expect(res.body.code).toBe('TENANT_MISMATCH')
    }
    const body = await api(p.gateway, a).post('/api/v1/auth/users', {
      tenant_id: 'tenant-b',
      email: 'x@b.test',
      role: 'Viewer',
    })
    expect(body.status).toBe(403)
    const own = await api(p.gateway, a).get('/api/v1/auth/users?tenant_id=tenant-a')
    expect(own.status).toBe(200)
    const op = await api(p.gateway, operator).get('/api/v1/auth/users?tenant_id=tenant-b')
    expect(op.status).toBe(200)
  })

  it('answers a burst past the tier limit with 429, Retry-After and RateLimit headers', async () => {
    const token = await userToken('bursty')
    const results = await Promise.all(
      Array.from({ length: 16 }, () => api(p.gateway, token).get('/api/v1/auth/me')),
    )
    const ok = results.filter((r) => r.status === 200)
    const limited = results.filter((r) => r.status === 429)
    expect(ok.length).toBeGreaterThanOrEqual(10)
    expect(ok.length).toBeLessThanOrEqual(11)
    expect(limited.length).toBeGreaterThan(0)
    expect(limited[0]!.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    for (const r of results) {
      expect(r.headers.get('ratelimit-limit')).toBe('10')
      expect(r.headers.get('ratelimit-remaining')).toMatch(/^\d+$/)
      expect(r.headers.get('ratelimit-reset')).toMatch(/^\d+$/)
    }
    // Another tenant has its own bucket; the operator gets the enterprise rate.
    expect((await api(p.gateway, await userToken('calm')).get('/api/v1/auth/me')).status).toBe(200)
    const op = await api(p.gateway, operator).get('/api/v1/auth/me')
    expect(op.headers.get('ratelimit-limit')).toBe('1000')
  })

  it('opens the breaker of a stopped upstream (fast 503) and closes it on recovery', async () => {
    const call = () => api(p.gateway, operator).get('/api/v1/webhooks/deliveries')
    const reference = await referenceMs(() => api(p.gateway).get('/api/v1/webhooks/deliveries'))
    expect((await call()).status).toBe(200)
    const upstreamHeaders = flaky.seen.at(-1)!
    expect(upstreamHeaders).toMatchObject({
      'x-tenant-id': 'platform',
      'x-user-role': 'Admin',
      authorization: `Bearer ${operator}`,
    })
    expect(upstreamHeaders['x-forwarded-for']).toBe('127.0.0.1')
    await flaky.stop()
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const res = await call()
      statuses.push(res.status)
      if (res.status === 502) expect(res.body.code).toBe('BAD_GATEWAY')
    }
    // One success and four failures in the window reach the minimum volume of five.
    expect(statuses.slice(0, 4)).toEqual([502, 502, 502, 502])
    expect(statuses.slice(4).every((s) => s === 503)).toBe(true)
    // Fast: about as quick as an answer the gateway gives by itself (timed above, same run).
    const { value: open, ms } = await timed(call)
    expect(ms).toBeLessThan(budgetMs({ floor: 50, reference, factor: 10 }))
    expect(open.status).toBe(503)
    expect(open.body).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' })
    expect(Number(open.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    const health = (await api(p.gateway).get('/health')).body
    expect(health.status).toBe('degraded')
    expect(health.checks.webhook).toMatchObject({ status: 'down', breaker: 'open' })
    expect(health.checks.auth).toMatchObject({ status: 'ok', breaker: 'closed' })
    const metrics = await (await fetch(`${p.gateway}/metrics`)).text()
    expect(metrics).toContain('mmp_gateway_breaker_state{service="webhook"} 1')

    flaky.start()
    const recovered = await eventually(
      async () => {
        const r = await call()
        return r.status === 200 ? r : null
      },
      5000,
      'the breaker to close once webhook answers again',
    )
    expect(recovered.status).toBe(200)
    const after = (await api(p.gateway).get('/health')).body
    expect(after.checks.webhook.breaker).toBe('closed')
    expect(await (await fetch(`${p.gateway}/metrics`)).text()).toContain(
      'mmp_gateway_breaker_state{service="webhook"} 0',
    )
  })

  it('answers 504 within the client’s X-Request-Timeout and forwards the deadline', async () => {
    const before = Date.now()
    const started = performance.now()
    const res = await api(p.gateway, operator).get('/api/v1/cashflow/daily', {
      'x-request-timeout': '200',
    })
    const took = performance.now() - started
    expect(res.status).toBe(504)
    expect(res.body).toMatchObject({ status: 504, code: 'TIMEOUT' })
    // The deadline was applied: not before the 200 ms asked for, and well before the upstream's
    // answer (it takes 10 s), so the 504 is the gateway's own.
    expect(took).toBeGreaterThanOrEqual(190)
    expect(took).toBeLessThan(SLOW_UPSTREAM_MS / 2)
    const deadline = Number(slow.seen.at(-1)!['x-request-deadline'])
    expect(deadline).toBeGreaterThanOrEqual(before + 190)
    expect(deadline).toBeLessThanOrEqual(Date.now())
  })

  it('keeps a valid X-Request-ID, echoes it and logs it; propagates traceparent', async () => {
    const trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const res = await api(p.gateway, operator).get('/api/v1/webhooks/deliveries', {
      'x-request-id': 'e2e-request-0042',
      traceparent: trace,
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toBe('e2e-request-0042')
    const sent = flaky.seen.at(-1)!
    expect(sent['x-request-id']).toBe('e2e-request-0042')
    expect(sent.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/)
    expect(sent.traceparent).not.toBe(trace)

    const made = await api(p.gateway, operator).get('/api/v1/webhooks/deliveries', {
      'x-request-id': 'bad id with spaces',
    })
    const id = made.headers.get('x-request-id')!
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/)
    expect(flaky.seen.at(-1)!.traceparent).toMatch(
      new RegExp(`^00-${id.replaceAll('-', '')}-[0-9a-f]{16}-01$`),
    )
    const line = await eventually(
      () =>
        p
          .logs()
          .split('\n')
          .find((l) => l.includes('"request_id":"e2e-request-0042"')),
      2000,
      'the access log line with the request id',
    )
    expect(JSON.parse(line!)).toMatchObject({ service: 'gateway', status: 200 })
  })

  it('answers 413 for a body over the limit and 404 for an unknown route, as problems', async () => {
    const big = await fetch(`${p.gateway}/api/v1/auth/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant_id: 'acme', pad: 'x'.repeat(1024 * 1024 + 10) }),
    })
    expect(big.status).toBe(413)
    expect(await big.json()).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' })
    const none = await api(p.gateway, operator).get('/api/v1/nowhere')
    expect(none.status).toBe(404)
  })

  it('serves a merged OpenAPI document, a self-contained /docs page and /metrics', async () => {
    // Traffic of its own to count: a burst past a Free tenant's limit (10) on /auth/me.
    const token = await userToken('metered')
    const burst = await Promise.all(
      Array.from({ length: 16 }, () => api(p.gateway, token).get('/api/v1/auth/me')),
    )
    expect(burst.map((r) => r.status)).toContain(429)
    const doc = (await api(p.gateway).get('/openapi.json')).body
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/auth/login',
        '/api/v1/auth/refresh',
        '/api/v1/auth/logout',
        '/api/v1/auth/accept-invite',
      ]),
    )
    expect(doc.components.securitySchemes.bearer).toMatchObject({ scheme: 'bearer' })
    const docs = await fetch(`${p.gateway}/docs`)
    expect(docs.headers.get('content-type')).toContain('text/html')
    const html = await docs.text()
    expect(html).toContain("fetch('openapi.json')")
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//)
    const metrics = await (await fetch(`${p.gateway}/metrics`)).text()
    expect(metrics).toContain('mmp_gateway_requests_total{service="auth",route="/api/v1/auth/me"')
    expect(metrics).toContain('mmp_gateway_request_duration_seconds_bucket')
    expect(metrics).toMatch(/mmp_gateway_rate_limited_total\{scope="tenant",tier="free"\} [1-9]/)
  })

  it('refreshes, rotates, logs out and slows repeated failed logins through the gateway', async () => {
    const login = await api(p.gateway).post('/api/v1/auth/login', OPERATOR)
    const refreshed = await api(p.gateway).post('/api/v1/auth/refresh', {
      refresh_token: login.body.refresh_token,
    })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.user).toMatchObject({ tenant_id: 'platform', role: 'Admin' })
    const reuse = await api(p.gateway).post('/api/v1/auth/refresh', {
      refresh_token: login.body.refresh_token,
    })
    expect(reuse.status).toBe(401)
    const family = await api(p.gateway).post('/api/v1/auth/refresh', {
      refresh_token: refreshed.body.refresh_token,
    })
    expect(family.status).toBe(401)
    const other = await api(p.gateway).post('/api/v1/auth/login', OPERATOR)
    const out = await api(p.gateway).post('/api/v1/auth/logout', {
      refresh_token: other.body.refresh_token,
    })
    expect(out.status).toBe(204)
    expect(
      (
        await api(p.gateway).post('/api/v1/auth/refresh', {
          refresh_token: other.body.refresh_token,
        })
      ).status,
    ).toBe(401)

    // A user of the test's own: its logins end up slowed down.
    const made = await api(p.gateway, operator).post('/api/v1/auth/users', {
      tenant_id: 'viewers',
      email: 'locked@viewers.test',
      role: 'Viewer',
      password: 'viewer-password-1',
    })
    expect(made.status).toBe(201)
    const wrong = { email: 'locked@viewers.test', password: 'wrong-password' }
    for (let i = 0; i < 5; i++)
      expect((await api(p.gateway).post('/api/v1/auth/login', wrong)).status).toBe(401)
    const locked = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'locked@viewers.test',
      password: 'viewer-password-1',
    })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(locked.headers.get('ratelimit-limit')).toBe('40')
  })
})
