/**
 * The shared security suite (issue: security hardening): generated from the gateway's merged
 * `/openapi.json`, so every route a service documents runs it and a new route cannot skip it.
 * No token → 401, a role that may not → 403, another tenant → 403, a malformed tenant id → 422,
 * an oversized body by Content-Length and by a chunked stream → 413; every refusal is a
 * problem+json body with the request id. Then the platform-wide points: secrets shown once are not
 * replayed, the operator's switches hold against the tenant, one login throttle whatever the door,
 * no address told across tenants, 414/431 as problems, and a keep-alive cap per address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { type Operation, operationsOf } from './support/openapi-ops.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { openKeptAlive } from './support/raw-http.ts'
import { createTenants } from './support/tenants.ts'

const PASSWORD = 'Sec-Suite-Passphrase-77'
const LIMIT = 1024 * 1024

describe('security suite over every documented route', () => {
  let p: TestPlatform
  let ops: Operation[]
  const tokens: Record<string, string> = {}

  beforeAll(async () => {
    p = await startTestPlatform()
    tokens.operator = await p.login()
    await createTenants(p.gateway, tokens.operator, 'sec-a', 'sec-b')
    for (const role of ['Admin', 'Viewer'] as const) {
      const email = `${role.toLowerCase()}@sec-a.test`
      const made = await api(p.gateway, tokens.operator).post('/api/v1/auth/users', {
        tenant_id: 'sec-a',
        email,
        role,
        password: PASSWORD,
      })
      expect(made.status).toBe(201)
      tokens[role] = await p.login(email, PASSWORD)
    }
    ops = operationsOf(await (await fetch(`${p.gateway}/openapi.json`)).json())
  }, 60_000)
  afterAll(() => p.dispose())

  const pathFor = (op: Operation, tenantId: string) =>
    op.path.replace('{tenant_id}', tenantId).replace(/\{[a-z_]+\}/g, 'xyz_0000000000000000')

  const send = (
    op: Operation,
    opts: { token?: string; tenantId?: string; body?: BodyInit; headers?: Record<string, string> },
  ) => {
    const tenantId = opts.tenantId ?? 'sec-a'
    const query = op.tenantDoor === 'query' ? `?tenant_id=${encodeURIComponent(tenantId)}` : ''
    const json = op.tenantDoor === 'body' ? JSON.stringify({ tenant_id: tenantId }) : '{}'
    const hasBody = !['get', 'delete', 'head'].includes(op.method)
    return fetch(`${p.gateway}${pathFor(op, encodeURIComponent(tenantId))}${query}`, {
      method: op.method.toUpperCase(),
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(hasBody ? { body: opts.body ?? json } : {}),
    })
  }

  /** Collects what came back wrong, so one failure lists every route that broke the rule. */
  const expectEvery = async (
    selected: Operation[],
    run: (op: Operation) => Promise<Response>,
    status: number | number[],
    code?: string,
  ) => {
    expect(selected.length).toBeGreaterThan(0)
    const wanted = Array.isArray(status) ? status : [status]
    const wrong: string[] = []
    for (const op of selected) {
      const res = await run(op)
      const type = res.headers.get('content-type') ?? ''
      const body = type.includes('json') ? await res.json().catch(() => null) : await res.text()
      const ok =
        wanted.includes(res.status) &&
        type.includes('application/problem+json') &&
        body?.status === res.status &&
        typeof body?.request_id === 'string' &&
        (!code || body?.code === code)
      if (!ok)
        wrong.push(
          `${op.method.toUpperCase()} ${op.path}: ${res.status} ${type} ${JSON.stringify(body)?.slice(0, 120)}`,
        )
    }
    expect(wrong).toEqual([])
  }

  it('reads a document with public and secured routes', () => {
    expect(ops.length).toBeGreaterThan(70)
    expect(ops.filter((o) => o.public).map((o) => o.path)).toEqual(
      expect.arrayContaining(['/api/v1/auth/login', '/api/v1/payments/callback']),
    )
  })

  it('answers 401 with WWW-Authenticate to every secured route without a token', async () => {
    const secured = ops.filter((o) => !o.public)
    await expectEvery(secured, (op) => send(op, {}), 401, 'UNAUTHENTICATED')
    const res = await send(secured[0]!, { token: 'not-a-token' })
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('answers 403 to a Viewer on every route that changes something', async () => {
    // POST /cashflow/analyze is a read that takes its question as a body: every role may ask it.
    const reads = new Set(['/api/v1/cashflow/analyze'])
    const writes = ops.filter((o) => !o.public && o.method !== 'get' && !reads.has(o.path))
    await expectEvery(writes, (op) => send(op, { token: tokens.Viewer }), 403, 'FORBIDDEN')
  })

  it('answers 403 to a tenant Admin on every operator-only route', async () => {
    const operatorOnly = ops.filter(
      (o) => !o.public && /\((?:platform )?operator(?: only)?\)|operator only\)/.test(o.summary),
    )
    await expectEvery(operatorOnly, (op) => send(op, { token: tokens.Admin }), 403)
  })

  it('answers 403 to a tenant Admin naming another tenant on every door', async () => {
    const named = ops.filter((o) => !o.public && o.tenantDoor)
    await expectEvery(named, (op) => send(op, { token: tokens.Admin, tenantId: 'sec-b' }), 403)
  })

  it('answers 422 to a malformed tenant id on every door, even from the operator', async () => {
    const named = ops.filter((o) => !o.public && o.tenantDoor)
    await expectEvery(
      named,
      (op) => send(op, { token: tokens.operator, tenantId: 'Bad_Id!' }),
      422,
      'VALIDATION_FAILED',
    )
  })

  it('answers 413 to a body over the limit by Content-Length on every route that takes one', async () => {
    const withBody = ops.filter((o) => o.hasBody)
    const big = `{"pad":"${'x'.repeat(21 * LIMIT)}"}`
    await expectEvery(
      withBody,
      (op) => send(op, { token: tokens.operator, body: big }),
      413,
      'PAYLOAD_TOO_LARGE',
    )
  })

  it('answers 413 to a chunked body over the limit on every route that takes one, without reading it all', async () => {
    const withBody = ops.filter((o) => o.hasBody)
    const BOUNDARY = 'mmp-suite-boundary'
    const chunked = (op: Operation) => {
      let sent = 0
      const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
      // An upload is a real multipart file part that never ends, so it is read, not refused early.
      const head = op.multipart
        ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="s.csv"\r\n\r\n`
        : ''
      return new ReadableStream<Uint8Array>({
        start(controller) {
          if (head) controller.enqueue(new TextEncoder().encode(head))
        },
        pull(controller) {
          // 40 MiB at most: well past every limit, yet bounded.
          if (sent >= 40 * LIMIT) return controller.close()
          sent += chunk.length
          controller.enqueue(chunk)
        },
      })
    }
    // Public routes (login among them) get no token: the limit must hold for anyone.
    await expectEvery(
      withBody,
      (op) =>
        send(op, {
          token: op.public ? undefined : tokens.operator,
          body: chunked(op),
          headers: op.multipart
            ? { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }
            : {},
        }),
      413,
      'PAYLOAD_TOO_LARGE',
    )
  }, 60_000)

  it('keeps memory flat under 100 MiB chunked at the public login, refusing within a second', async () => {
    const rss = () =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.pid()}/status`, 'utf8'))?.[1]) * 1024
    const before = rss()
    const chunk = new TextEncoder().encode('x'.repeat(256 * 1024))
    const abuse = async () => {
      let sent = 0
      const started = performance.now()
      const res = await fetch(`${p.gateway}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 100 * LIMIT) return controller.close()
            sent += chunk.length
            controller.enqueue(chunk)
          },
        }),
      })
      expect(res.status).toBe(413)
      expect((await res.json()).code).toBe('PAYLOAD_TOO_LARGE')
      return performance.now() - started
    }
    const took = await Promise.all([abuse(), abuse(), abuse()])
    expect(Math.max(...took)).toBeLessThan(1000)
    expect(rss() - before).toBeLessThan(30 * LIMIT)
  }, 30_000)

  it('marks answers that carry tokens or secrets no-store and nosniff', async () => {
    const login = await fetch(`${p.gateway}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@sec-a.test', password: PASSWORD }),
    })
    expect(login.status).toBe(200)
    expect(login.headers.get('cache-control')).toBe('no-store')
    expect(login.headers.get('x-content-type-options')).toBe('nosniff')
    const hook = await api(p.gateway, tokens.Admin).post('/api/v1/webhooks', {
      url: 'https://hooks.example.com/mmp',
      events: ['payment.success'],
    })
    expect(hook.status).toBe(201)
    expect(hook.headers.get('cache-control')).toBe('no-store')
  })

  it('replays a create that returned a secret without it, saying it was shown once', async () => {
    const admin = api(p.gateway, tokens.Admin)
    for (const [path, body, field] of [
      ['/api/v1/auth/api-keys', { name: 'suite', role: 'Viewer' }, 'key'],
      [
        '/api/v1/webhooks',
        { url: 'https://hooks.example.com/once', events: ['payment.success'] },
        'secret',
      ],
    ] as const) {
      const key = { 'idempotency-key': `suite-once-${path}` }
      const first = await admin.post(path, body, key)
      const again = await admin.post(path, body, key)
      expect(typeof first.body[field]).toBe('string')
      expect(again.body[field]).toBeUndefined()
      expect(again.body).toMatchObject({
        id: first.body.id,
        shown_once: expect.stringContaining('shown once'),
      })
    }
  })

  it('opens one M-Pesa prompt per phone: of ten pushes at once, nine get 409 PHONE_BUSY with Retry-After', async () => {
    // 9999: the simulator's success whose callback never comes, so the first prompt stays open.
    const push = () =>
      api(p.gateway, tokens.Admin).post('/api/v1/payments/stkpush', {
        phone_number: '254733449999',
        amount: 10,
        account_reference: 'SUITE-1',
        transaction_desc: 'suite',
      })
    const answers = await Promise.all(Array.from({ length: 10 }, push))
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)])
    for (const busy of answers.filter((a) => a.status === 409)) {
      expect(busy.body).toMatchObject({ code: 'PHONE_BUSY', status: 409 })
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0)
    }
  })

  it("keeps the operator's feature switches: the tenant's Admin cannot lift them", async () => {
    await createTenants(p.gateway, tokens.operator!, 'sec-c')
    const admin = api(p.gateway, await p.login('owner@sec-c.test', 'sec-c-Owner-Passphrase-42'))
    const path = '/api/v1/tenants/sec-c/features'
    const off = await api(p.gateway, tokens.operator).put(path, {
      api_access: false,
      bulk_upload: false,
    })
    expect(off.status).toBe(200)
    const lift = await admin.put(path, { api_access: null, bulk_upload: true })
    expect(lift.status).toBe(402)
    const cleared = await admin.put(path, { api_access: null })
    expect(cleared.body).toMatchObject({
      features: { api_access: false, bulk_upload: false },
      held_by: { api_access: 'operator', bulk_upload: 'operator' },
    })
    expect((await admin.post('/api/v1/auth/api-keys', { name: 'k', role: 'Viewer' })).status).toBe(
      402,
    )
  })

  it('counts a login in one throttle through the gateway and at the auth port', async () => {
    const email = 'throttled@sec-a.test'
    const user = { tenant_id: 'sec-a', email, role: 'Viewer', password: PASSWORD }
    expect((await api(p.gateway, tokens.operator).post('/api/v1/auth/users', user)).status).toBe(
      201,
    )
    const login = (base: string, password: string) =>
      api(base).post('/api/v1/auth/login', { email, password })
    for (let i = 0; i < 5; i++) expect((await login(p.gateway, `wrong-${i}`)).status).toBe(401)
    expect((await login(p.url('auth'), PASSWORD)).status).toBe(429)
    expect((await login(p.gateway, PASSWORD)).status).toBe(429)
  })

  it("answers an invitation of another tenant's address like any other invitation", async () => {
    await createTenants(p.gateway, tokens.operator!, { id: 'sec-d', plan: 'pro' })
    const admin = api(p.gateway, await p.login('owner@sec-d.test', 'sec-d-Owner-Passphrase-42'))
    const invite = (email: string) =>
      admin.post('/api/v1/tenants/sec-d/users', { email, role: 'Viewer' })
    const fresh = await invite('fresh@nowhere.test')
    const foreign = await invite('owner@sec-b.test')
    expect(`${foreign.status} ${Object.keys(foreign.body).sort()}`).toBe(
      `${fresh.status} ${Object.keys(fresh.body).sort()}`,
    )
    expect(foreign.status).toBe(201)
  })

  /** Sends a GET with a long URL or header: what came back, as `status type code`. */
  const oversized = async (urlPad: number, headerPad: number) => {
    const res = await fetch(`${p.gateway}/api/v1/analytics/summary?q=${'x'.repeat(urlPad)}`, {
      headers: { 'x-pad': 'y'.repeat(headerPad) },
    })
    const type = res.headers.get('content-type') ?? ''
    const body = type.includes('json') ? await res.json() : null
    return `${res.status} ${type} ${body?.code} ${typeof body?.request_id}`
  }

  it('answers an over-long URL with a 414 problem, at 9 KiB and at 16 and 40 KiB', async () => {
    for (const size of [9000, 16 * 1024, 40 * 1024])
      expect(await oversized(size, 0)).toBe('414 application/problem+json URI_TOO_LONG string')
  })

  it('answers oversized headers with a 431 problem, at 20 and 48 KiB', async () => {
    for (const size of [20 * 1024, 48 * 1024])
      expect(await oversized(0, size)).toBe('431 application/problem+json HEADERS_TOO_LARGE string')
  })

  it('closes keep-alive connections of one address past its cap, answering each', async () => {
    const CAP = 128
    const sockets = await openKeptAlive(p.gateway, '/api/v1/analytics/summary', 300)
    expect(new Set(await Promise.all(sockets.map((s) => s.status)))).toEqual(new Set(['401']))
    const held = await eventually(() => {
      const open = sockets.filter((s) => !s.closed()).length
      return open <= CAP ? open : null
    })
    for (const s of sockets) s.end()
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThanOrEqual(CAP)
  }, 30_000)
})
