import { afterAll, describe, expect, it } from 'bun:test'
import { t } from 'elysia'
import { migrations } from '../../schema/auth/migrations.ts'
import { createHop } from './hop.ts'
import { createServiceApp } from './service.ts'
import { createTestKit } from './testing.ts'

const kit = await createTestKit('auth', { migrations })
afterAll(() => kit.cleanup())
const app = createServiceApp(kit.ctx, { title: 'Test' })
  .post('/api/v1/test/things', ({ body, actor }) => ({ name: body.name, tenant: actor.tenantId }), {
    auth: 'manage',
    body: t.Object({ name: t.String({ minLength: 1 }) }),
  })
  .post('/api/v1/test/kinds', ({ body }) => body, {
    auth: 'manage',
    body: t.Object({
      kind: t.Union([t.Literal('Revenue'), t.Literal('Inventory')]),
      limits: t.Object({
        a: t.Union([t.Integer({ minimum: 0 }), t.Null()]),
        b: t.Union([t.Integer({ minimum: 0 }), t.Null()]),
      }),
    }),
  })
  .get('/api/v1/test/static.json', () => ({ ok: true }), { auth: 'read' })
  .get('/api/v1/test/everyone', ({ actor }) => ({ user: actor.userId, tenant: actor.tenantId }), {
    auth: 'operator',
  })
  .post('/api/v1/test/everyone', () => ({ ok: true }), { auth: 'operator' })
  .get('/api/v1/test/storage/:fault', ({ params }) => {
    const errors: Record<string, [string, string]> = {
      io: ['SQLITE_IOERR_WRITE', 'disk I/O error'],
      full: ['SQLITE_FULL', 'database or disk is full'],
      enospc: ['ENOSPC', 'no space left on device'],
    }
    const [code, message] = errors[params.fault] ?? ['X', 'boom']
    throw Object.assign(new Error(message), { name: 'SQLiteError', code })
  })
  .get('/api/v1/test/list', ({ query }) => ({ limit: query.limit }), {
    auth: 'read',
    query: t.Object({ limit: t.Optional(t.Numeric({ minimum: 1, maximum: 500, multipleOf: 1 })) }),
  })

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.handle(
    new Request('http://localhost/api/v1/test/things', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    }),
  )

describe('the service base', () => {
  it('lets a platform process read an operator list with the hop-signed platform-sync purpose, and nothing more', async () => {
    const call = (method: string, hopKey: string | null, purpose = 'platform-sync') => {
      const headers = new Headers({ 'x-mmp-purpose': purpose })
      if (hopKey) createHop(hopKey).sign(headers)
      return app.handle(new Request('http://localhost/api/v1/test/everyone', { method, headers }))
    }
    const ok = await call('GET', 'test-hop-key')
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ user: 'usr_mmp_process', tenant: 'platform' })
    // A client claiming the purpose, or signing with another key, or writing, or another purpose.
    expect((await call('GET', null)).status).toBe(401)
    expect((await call('GET', 'another-key')).status).toBe(401)
    expect((await call('POST', 'test-hop-key')).status).toBe(401)
    expect((await call('GET', 'test-hop-key', 'invoice-payment')).status).toBe(401)
  })

  it('answers 401 for a missing token even when the body is invalid', async () => {
    const res = await post({ name: 5 })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('answers 403 for a role that may not, before looking at the body', async () => {
    const res = await post({ name: 5 }, await kit.authFor({ tenantId: 'acme', role: 'Viewer' }))
    expect(res.status).toBe(403)
  })

  it('validates the body of an allowed caller with 422 and field errors', async () => {
    const res = await post({ name: '' }, await kit.authFor({ tenantId: 'acme', role: 'Manager' }))
    expect(res.status).toBe(422)
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('name')
  })

  it('gives the handler the verified actor', async () => {
    const res = await post({ name: 'x' }, await kit.authFor({ tenantId: 'acme', role: 'Manager' }))
    expect(await res.json()).toEqual({ name: 'x', tenant: 'acme' })
  })

  it('names the query parameter, not the body or "(query)", for an invalid query value', async () => {
    const res = await app.handle(
      new Request('http://localhost/api/v1/test/list?limit=1.5', {
        headers: await kit.authFor({ tenantId: 'acme' }),
      }),
    )
    expect(res.status).toBe(422)
    const body = (await res.json()) as { errors: { field: string }[] }
    expect(body.errors.map((e) => e.field)).toEqual(['limit'])
    const named = await app.handle(
      new Request('http://localhost/api/v1/test/list?limit=abc', {
        headers: await kit.authFor({ tenantId: 'acme' }),
      }),
    )
    expect(((await named.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('limit')
  })

  it('refuses a request whose deadline has passed with 504', async () => {
    const res = await post(
      { name: 'x' },
      {
        ...(await kit.authFor({ tenantId: 'acme' })),
        'x-request-deadline': String(Date.now() - 1),
      },
    )
    expect(res.status).toBe(504)
  })

  it('documents routes that look like static files', async () => {
    const doc = (await (await app.handle(new Request('http://localhost/openapi.json'))).json()) as {
      paths: Record<string, unknown>
    }
    expect(Object.keys(doc.paths)).toContain('/api/v1/test/static.json')
  })

  it('answers a storage fault with 503 or 507 problem+json and Retry-After, never a 500', async () => {
    for (const [fault, status, code] of [
      ['io', 503, 'STORAGE_UNAVAILABLE'],
      ['full', 507, 'STORAGE_FULL'],
      ['enospc', 507, 'STORAGE_FULL'],
    ] as const) {
      const res = await app.handle(new Request(`http://localhost/api/v1/test/storage/${fault}`))
      expect(res.status).toBe(status)
      expect(res.headers.get('content-type')).toBe('application/problem+json')
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await res.json()).toMatchObject({ status, code })
    }
    const other = await app.handle(new Request('http://localhost/api/v1/test/storage/other'))
    expect(other.status).toBe(500)
  })

  it('lists the allowed values of an enum, and says each problem once', async () => {
    const res = await app.handle(
      new Request('http://localhost/api/v1/test/kinds', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(await kit.authFor({ tenantId: 'acme' })),
        },
        body: JSON.stringify({ kind: 'Nope', limits: { a: 'x' } }),
      }),
    )
    expect(res.status).toBe(422)
    const body = (await res.json()) as {
      detail: string
      errors: { field: string; message: string }[]
    }
    expect(body.errors).toContainEqual({
      field: 'kind',
      message: 'must be one of: Revenue, Inventory',
    })
    const fields = body.errors.map((e) => e.field)
    expect(new Set(fields).size).toBe(fields.length)
    expect(fields).toContain('limits.b')
    expect(body.detail).not.toContain("'string'")
    expect(body.errors).toContainEqual({ field: 'limits.a', message: 'must be an integer or null' })
  })
})
