import { afterAll, describe, expect, it } from 'bun:test'
import { t } from 'elysia'
import fc from 'fast-check'
import { migrations } from '../../schema/auth/migrations.ts'
import { NotFound } from './errors.ts'
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS, REPLAYED_HEADER } from './idempotency.ts'
import { createServiceApp } from './service.ts'
import { createTestKit } from './testing.ts'

const kit = await createTestKit('auth', { migrations })
afterAll(() => kit.cleanup())

/** Effects of the test route: one per request that really ran. */
let effects = 0
/** Resolves with the release of the next slow request once its handler is holding. */
let holding = Promise.withResolvers<() => void>()
const nextHold = async (): Promise<() => void> => {
  const r = await holding.promise
  holding = Promise.withResolvers<() => void>()
  return r
}
const app = createServiceApp(kit.ctx, { title: 'Test' })
  .post(
    '/api/v1/test/things',
    async ({ body, set }) => {
      effects++
      if (body.slow)
        await new Promise<void>((r) => {
          holding.resolve(r)
        })
      if (body.name === 'missing') throw new NotFound('thing', body.name)
      if (body.name === 'crash') throw new Error('boom')
      set.status = 201
      set.headers.location = `/api/v1/test/things/thing_${effects}`
      return { id: `thing_${effects}`, name: body.name }
    },
    {
      auth: 'manage',
      idempotent: true,
      body: t.Object({ name: t.String({ minLength: 1 }), slow: t.Optional(t.Boolean()) }),
    },
  )
  .post('/api/v1/test/things/:id/replay', ({ params }) => ({ id: params.id, n: ++effects }), {
    auth: 'manage',
    idempotent: true,
  })

const post = async (
  body: unknown,
  key: string | null,
  tenantId = 'acme',
  path = '/api/v1/test/things',
) =>
  app.handle(
    new Request(`http://localhost${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key === null ? {} : { 'idempotency-key': key }),
        ...(await kit.authFor({ tenantId })),
      },
      body: JSON.stringify(body),
    }),
  )

describe('Idempotency-Key on a create', () => {
  it('replays the stored status and body for the same key and body, with Idempotent-Replayed', async () => {
    const before = effects
    const first = await post({ name: 'a' }, 'k-same')
    const second = await post({ name: 'a' }, 'k-same')
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(await second.json()).toEqual(await first.json())
    expect(second.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(first.headers.get(REPLAYED_HEADER)).toBeNull()
    // Where the created thing (or a job to follow) lives comes back too.
    expect(first.headers.get('location')).toStartWith('/api/v1/test/things/thing_')
    expect(second.headers.get('location')).toBe(first.headers.get('location'))
    expect(effects - before).toBe(1)
  })

  it('treats a body with its keys in another order as the same request', async () => {
    const first = await post({ name: 'b', slow: false }, 'k-order')
    const second = await post({ slow: false, name: 'b' }, 'k-order')
    expect(second.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(await second.json()).toEqual(await first.json())
  })

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with another body', async () => {
    await post({ name: 'c' }, 'k-reuse')
    const res = await post({ name: 'd' }, 'k-reuse')
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' })
  })

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key on another id of the same route', async () => {
    const one = await post({}, 'k-path', 'acme', '/api/v1/test/things/x1/replay')
    const other = await post({}, 'k-path', 'acme', '/api/v1/test/things/x2/replay')
    expect(one.status).toBe(200)
    expect(other.status).toBe(409)
  })

  it('answers 409 IDEMPOTENCY_IN_PROGRESS with Retry-After while the first is running', async () => {
    const first = post({ name: 'e', slow: true }, 'k-running')
    const release = await nextHold()
    const second = await post({ name: 'e', slow: true }, 'k-running')
    expect(second.status).toBe(409)
    expect(second.headers.get('retry-after')).toBeTruthy()
    expect(await second.json()).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS' })
    release()
    expect((await first).status).toBe(201)
    expect((await post({ name: 'e', slow: true }, 'k-running')).headers.get(REPLAYED_HEADER)).toBe(
      'true',
    )
  })

  it('keeps keys apart per tenant', async () => {
    const before = effects
    await post({ name: 'f' }, 'k-tenant', 'acme')
    const other = await post({ name: 'f' }, 'k-tenant', 'globex')
    expect(other.headers.get(REPLAYED_HEADER)).toBeNull()
    expect(effects - before).toBe(2)
  })

  it('replays a 4xx problem answer, and frees the key after a 5xx', async () => {
    const before = effects
    const missing = await post({ name: 'missing' }, 'k-404')
    const again = await post({ name: 'missing' }, 'k-404')
    expect(missing.status).toBe(404)
    expect(again.status).toBe(404)
    expect(again.headers.get(REPLAYED_HEADER)).toBe('true')
    expect(effects - before).toBe(1)
    const crash = await post({ name: 'crash' }, 'k-500')
    const retry = await post({ name: 'crash' }, 'k-500')
    expect(crash.status).toBe(500)
    expect(retry.headers.get(REPLAYED_HEADER)).toBeNull()
    expect(effects - before).toBe(3)
  })

  it('runs every request without a key', async () => {
    const before = effects
    await post({ name: 'g' }, null)
    await post({ name: 'g' }, null)
    expect(effects - before).toBe(2)
  })

  it('refuses a key longer than 255 characters with 422 naming the header', async () => {
    const res = await post({ name: 'h' }, 'k'.repeat(256))
    expect(res.status).toBe(422)
    expect(await res.json()).toMatchObject({ errors: [{ field: 'Idempotency-Key' }] })
    expect((await post({ name: 'h' }, 'k'.repeat(255))).status).toBe(201)
  })

  it('stores nothing for a request that fails validation', async () => {
    expect((await post({ name: '' }, 'k-invalid')).status).toBe(422)
    expect((await post({ name: 'i' }, 'k-invalid')).status).toBe(201)
  })

  it('forgets a key after 24 hours, and takes over an abandoned one after the lease', async () => {
    const before = effects
    await post({ name: 'j' }, 'k-old')
    kit.ctx.clock.advance(IDEMPOTENCY_RETENTION_MS + 1000)
    const later = await post({ name: 'j' }, 'k-old')
    expect(later.headers.get(REPLAYED_HEADER)).toBeNull()
    expect(effects - before).toBe(2)
    // A first request whose process died: its claim holds until the lease passes.
    const stuck = post({ name: 'k', slow: true }, 'k-dead')
    const abandoned = await nextHold()
    expect((await post({ name: 'k', slow: true }, 'k-dead')).status).toBe(409)
    kit.ctx.clock.advance(IDEMPOTENCY_LEASE_MS + 1000)
    const retry = post({ name: 'k', slow: true }, 'k-dead')
    ;(await nextHold())()
    expect((await retry).status).toBe(201)
    abandoned()
    await stuck
    kit.ctx.clock.set(null)
  })

  it('produces one effect for N concurrent requests with one key (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 12 }), fc.uuid(), async (n, key) => {
        const before = effects
        const answers = await Promise.all(
          Array.from({ length: n }, () => post({ name: 'concurrent' }, key)),
        )
        expect(effects - before).toBe(1)
        const statuses = answers.map((r) => r.status)
        expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1)
        for (const s of statuses) expect([201, 409]).toContain(s)
      }),
      { numRuns: 15 },
    )
  })
})
