import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { migrations } from '../../schema/webhook/migrations.ts'
import { api } from '../../test/support/client.ts'
import type { ServiceInstance } from '../kernel/context.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import service from './index.ts'
import { createSecretBox, parseBoxKey } from './secret-box.ts'
import type { WebhookSettings } from './settings.ts'

const KEY = Buffer.alloc(32, 9).toString('base64')
const b64 = (bytes: number, fill = 'k') => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`

describe('webhook signing secrets', () => {
  let kit: TestKit<WebhookSettings>
  let svc: ServiceInstance
  const received: Array<{ path: string; headers: Record<string, string>; body: string }> = []
  const receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      received.push({
        path: new URL(req.url).pathname,
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
      })
      return new Response('ok')
    },
  })
  const base = `http://127.0.0.1:${receiver.port}`
  const settings: WebhookSettings = {
    allowInsecure: true,
    allowHosts: [],
    retrySchedule: [0],
    timeoutMs: 10_000,
    rateLimit: 500,
    maxInFlight: 32,
    secretKey: KEY,
  }

  const call = async (
    svcApp: ServiceInstance['app'],
    method: string,
    path: string,
    body?: unknown,
  ) => api(svcApp, await kit.authFor({ tenantId: 'acme' })).request(method, path, body)
  const register = (path: string, secret?: string) =>
    call(svc.app, 'POST', '/api/v1/webhooks', {
      url: base + path,
      events: ['payment.failed'],
      ...(secret === undefined ? {} : { secret }),
    })
  const storedRow = (id: string) =>
    kit.registry
      .platform('webhook')
      .sqlite.query<{ secret: string; previous_secret: string | null }, [string]>(
        'SELECT secret, previous_secret FROM webhook_endpoints WHERE id = ?',
      )
      .get(id)!
  const deliveredTo = (path: string) => eventually(() => received.find((r) => r.path === path))

  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations, settings })
    svc = await service.create(kit.ctx)
    await svc.start?.()
  })
  afterAll(async () => {
    await svc.stop?.()
    receiver.stop(true)
    kit.cleanup()
  })

  for (const [secret, why] of [
    ['x', /24 to 64 random bytes.*1 bytes/],
    ['short-plain-secret', /24 to 64/],
    [b64(23), /23 bytes/],
    [b64(65), /65 bytes/],
    ['whsec_not base64!', /base64/],
    ['whsec_', /base64/],
  ] as const) {
    it(`refuses the secret ${JSON.stringify(secret.slice(0, 24))} at registration and rotation with 422 naming it`, async () => {
      const res = await register('/never', secret)
      expect(res.status).toBe(422)
      expect(res.body.errors).toEqual([
        expect.objectContaining({ field: 'secret', message: expect.stringMatching(why) }),
      ])
      const ep = await register('/rot', b64(32))
      const rotated = await call(svc.app, 'POST', `/api/v1/webhooks/${ep.body.id}/rotate-secret`, {
        secret,
      })
      expect(rotated.status).toBe(422)
      expect(rotated.body.errors[0]).toMatchObject({ field: 'secret' })
    })
  }

  it('accepts 24 to 64 bytes as whsec_ base64 or as a plain string', async () => {
    for (const secret of [b64(24), b64(64), 'p'.repeat(24), 'p'.repeat(64)])
      expect((await register('/ok', secret)).status).toBe(201)
    expect((await register('/ok', 'p'.repeat(65))).status).toBe(422)
  })

  it('generates a secret when omitted and shows it once, in the 201 answer only', async () => {
    const res = await register('/generated')
    expect(res.status).toBe(201)
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const got = await call(svc.app, 'GET', `/api/v1/webhooks/${res.body.id}`)
    expect(got.body.secret).toBeUndefined()
    const listed = await call(svc.app, 'GET', '/api/v1/webhooks')
    expect(JSON.stringify(listed.body)).not.toContain(res.body.secret)
    await call(svc.app, 'POST', '/api/v1/webhooks/trigger', { event: 'payment.failed' })
    const delivery = await deliveredTo('/generated')
    expect(new Webhook(res.body.secret).verify(delivery.body, delivery.headers)).toBeTruthy()
  })

  it('stores no clear secret, and deliveries still verify with standardwebhooks', async () => {
    const given = b64(32)
    const plain = 'a-plain-secret-of-enough-bytes!!'
    const a = await register('/sealed-a', given)
    const b = await register('/sealed-b', plain)
    const rowA = storedRow(a.body.id)
    expect(rowA.secret).toStartWith('enc:v1:')
    // The database file and its WAL, byte for byte: what a copied data dir would hold.
    const path = join(kit.dataDir, 'platform', 'webhook.db')
    const dump = [path, `${path}-wal`]
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('')
    expect(dump).toContain('enc:v1:')
    for (const s of [given, given.slice(6), plain]) expect(dump).not.toContain(s)
    expect(storedRow(b.body.id).secret).not.toContain(plain)
    received.length = 0
    await call(svc.app, 'POST', '/api/v1/webhooks/trigger', { event: 'payment.failed' })
    const [da, db] = [await deliveredTo('/sealed-a'), await deliveredTo('/sealed-b')]
    expect(new Webhook(given).verify(da.body, da.headers)).toBeTruthy()
    const plainB64 = `whsec_${Buffer.from(plain).toString('base64')}`
    expect(new Webhook(plainB64).verify(db.body, db.headers)).toBeTruthy()
    // A sealed secret copied into another row does not open there.
    const box = createSecretBox(parseBoxKey(KEY))
    expect(box.open(rowA.secret, a.body.id)).toBe(given)
    expect(() => box.open(rowA.secret, b.body.id)).toThrow()
    expect(() =>
      createSecretBox(parseBoxKey(Buffer.alloc(32, 1).toString('base64'))).open(
        rowA.secret,
        a.body.id,
      ),
    ).toThrow(/another key/)
  })

  it('keeps the rotated-out secret sealed too, and both still sign in the overlap', async () => {
    const first = b64(40)
    const ep = await register('/rotating', first)
    const rotated = await call(svc.app, 'POST', `/api/v1/webhooks/${ep.body.id}/rotate-secret`, {})
    const row = storedRow(ep.body.id)
    expect(row.secret).toStartWith('enc:v1:')
    expect(row.previous_secret).toStartWith('enc:v1:')
    received.length = 0
    await call(svc.app, 'POST', '/api/v1/webhooks/trigger', { event: 'payment.failed' })
    const got = await deliveredTo('/rotating')
    expect(new Webhook(first).verify(got.body, got.headers)).toBeTruthy()
    expect(new Webhook(rotated.body.secret).verify(got.body, got.headers)).toBeTruthy()
  })

  it('encrypts clear rows left by an older version when the service starts', async () => {
    // A secret of its own: the clear bytes written here stay in the file's free pages, where the
    // test that reads the whole file for clear secrets must not find its own.
    const clear = b64(32, 'L')
    const ep = await register('/legacy', clear)
    const db = kit.registry.platform('webhook')
    db.sqlite
      .query('UPDATE webhook_endpoints SET secret = ?, previous_secret = NULL WHERE id = ?')
      .run(clear, ep.body.id)
    await svc.stop?.()
    svc = await service.create(kit.ctx)
    await svc.start?.()
    expect(storedRow(ep.body.id).secret).toStartWith('enc:v1:')
    received.length = 0
    await call(svc.app, 'POST', '/api/v1/webhooks/trigger', { event: 'payment.failed' })
    const got = await deliveredTo('/legacy')
    expect(new Webhook(clear).verify(got.body, got.headers)).toBeTruthy()
  })

  it('refuses to start without a key', () => {
    expect(() => service.create({ ...kit.ctx, settings: { ...settings, secretKey: '' } })).toThrow(
      /secret key/,
    )
  })
})
