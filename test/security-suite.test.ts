/**
 * The shared security suite (issue: security hardening): generated from the gateway's merged
 * `/openapi.json`, so every route a service documents runs it and a new route cannot skip it.
 * No token → 401, a role that may not → 403, another tenant → 403, a malformed tenant id → 422,
 * an oversized body by Content-Length and by a chunked stream → 413; every refusal is a
 * problem+json body with the request id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'

interface Operation {
  method: string
  path: string
  summary: string
  public: boolean
  hasBody: boolean
  /** Takes only multipart/form-data (a file upload). */
  multipart: boolean
  tenantDoor: 'path' | 'query' | 'body' | null
}

function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params: Array<{ in: string; name: string }> = op.parameters ?? []
      const named = (where: string) => params.some((p) => p.in === where && p.name === 'tenant_id')
      const schema = op.requestBody?.content?.['application/json']?.schema
      out.push({
        method,
        path,
        summary: op.summary ?? '',
        public: !op.security || op.security.length === 0,
        hasBody: !!op.requestBody,
        multipart:
          !!op.requestBody &&
          Object.keys(op.requestBody.content ?? {}).every((t) => t === 'multipart/form-data'),
        tenantDoor: named('path')
          ? 'path'
          : schema?.properties?.tenant_id
            ? 'body'
            : named('query')
              ? 'query'
              : null,
      })
    }
  }
  return out
}

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
    const SOCKETS = 300
    const CAP = 128
    const host = new URL(p.gateway)
    const sockets = await Promise.all(
      Array.from(
        { length: SOCKETS },
        () =>
          new Promise<{ closed: () => boolean; status: Promise<string>; end: () => void }>(
            (resolve, reject) => {
              let closed = false
              let head = ''
              const { promise, resolve: answered } = Promise.withResolvers<string>()
              const s = connect(Number(host.port), host.hostname, () => {
                s.write(`GET /api/v1/analytics/summary HTTP/1.1\r\nHost: ${host.host}\r\n\r\n`)
                resolve({ closed: () => closed, status: promise, end: () => s.destroy() })
              })
              s.on('data', (d) => {
                head += d.toString('latin1')
                answered(head.slice(9, 12))
              })
              s.on('close', () => {
                closed = true
                answered(head.slice(9, 12))
              })
              s.on('error', reject)
            },
          ),
      ),
    )
    const statuses = await Promise.all(sockets.map((s) => s.status))
    expect(new Set(statuses)).toEqual(new Set(['401']))
    const held = await eventually(() => {
      const open = sockets.filter((s) => !s.closed()).length
      return open <= CAP ? open : null
    })
    for (const s of sockets) s.end()
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThanOrEqual(CAP)
  }, 30_000)
})
