import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createServiceClient, staticDiscovery } from '../kernel/http-client.ts'
import { createLogger } from '../kernel/log.ts'
import { OWNER_HEADER, ownerOf } from '../kernel/tenant-owner.ts'
import { createObserver } from './observe.ts'
import { withHeaders } from './respond.ts'
import { createUpstream, tenantOfRequest } from './upstream.ts'

/** Two instances of analytics, each answering with its own name and what it was asked. */
const instances: Array<ReturnType<typeof Bun.serve>> = []
let urls: string[] = []
beforeAll(() => {
  for (const name of ['a', 'b']) {
    instances.push(
      Bun.serve({
        port: 0,
        fetch: (req) => Response.json({ instance: name, url: req.url }),
      }),
    )
  }
  urls = instances.map((s) => s.url.origin)
})
afterAll(() => {
  for (const s of instances) s.stop(true)
})

const nameOf = (url: string): string => ['a', 'b'][urls.indexOf(url)] ?? 'none'
const tenants = Array.from({ length: 12 }, (_, i) => `shop-${i}`)

describe('requests of a service that runs as several instances', () => {
  it('reach the instance that owns their tenant from the gateway, every time', async () => {
    const log = createLogger('upstream-test')
    log.level = -999
    const send = createUpstream({
      discovery: staticDiscovery({ analytics: urls }),
      observe: createObserver({ log, accessLog: 'off' }),
    })
    const out = (tenant: string, extra: Record<string, string> = {}) => ({
      method: 'GET',
      headers: new Headers({ 'x-tenant-id': tenant, ...extra }),
      body: null,
      budget: 2000,
    })
    for (const t of tenants) {
      for (let i = 0; i < 2; i++) {
        const res = await send('analytics', '/api/v1/analytics/summary', out(t))
        expect((await res.json()).instance).toBe(nameOf(ownerOf(t, urls)))
      }
      // The operator acting for a tenant is routed by the tenant it names.
      const named = await send(
        'analytics',
        `/api/v1/analytics/summary?tenant_id=${t}`,
        out('platform'),
      )
      expect((await named.json()).instance).toBe(nameOf(ownerOf(t, urls)))
    }
    const home = await send('analytics', '/api/v1/analytics/summary', out('platform'))
    expect((await home.json()).instance).toBe('a')
  })

  it('finds the tenant in the path, the query, a JSON body, then the caller', () => {
    const json = (body: unknown, tenant = 'platform') => ({
      method: 'POST',
      headers: new Headers({ 'content-type': 'application/json', 'x-tenant-id': tenant }),
      body: new TextEncoder().encode(JSON.stringify(body)),
      budget: 1000,
    })
    expect(tenantOfRequest('/api/v1/cashflow/summary/duka?x=1', json({}))).toBe('duka')
    expect(tenantOfRequest('/api/v1/analytics/summary?tenant_id=kiosk', json({}))).toBe('kiosk')
    expect(tenantOfRequest('/api/v1/parser/transactions', json({ tenant_id: 'duka' }))).toBe('duka')
    expect(tenantOfRequest('/api/v1/parser/transactions', json([], 'kiosk'))).toBe('kiosk')
    expect(
      tenantOfRequest('/api/v1/auth/login', { ...json({}), headers: new Headers() }),
    ).toBeUndefined()
    expect(tenantOfRequest('/x', { ...json({}), tenant: 'given' })).toBe('given')
  })

  it('do not fail over to another instance: it holds none of the tenant’s data', async () => {
    const log = createLogger('upstream-test')
    log.level = -999
    const dead = 'http://127.0.0.1:9'
    const list = [urls[0]!, dead]
    const t = tenants.find((x) => ownerOf(x, list) === dead)!
    const send = createUpstream({
      discovery: staticDiscovery({ analytics: list }),
      observe: createObserver({ log, accessLog: 'off' }),
    })
    await expect(
      send('analytics', '/api/v1/analytics/summary', {
        method: 'GET',
        headers: new Headers({ 'x-tenant-id': t }),
        body: null,
        budget: 2000,
      }),
    ).rejects.toMatchObject({ code: 'BAD_GATEWAY' })
  })

  it('reach the owner from a service client too, by the tenant named or the caller’s', async () => {
    const client = createServiceClient(staticDiscovery({ analytics: urls }))
    for (const t of tenants) {
      const owner = nameOf(ownerOf(t, urls))
      const byQuery = await client.call<{ instance: string }>(
        'analytics',
        '/api/v1/analytics/summary',
        { query: { tenant_id: t } },
      )
      expect(byQuery.instance).toBe(owner)
      const from = new Request('http://svc/x', { headers: { 'x-tenant-id': t } })
      expect(
        (
          await client.call<{ instance: string }>('analytics', '/api/v1/analytics/summary', {
            from,
          })
        ).instance,
      ).toBe(owner)
      const claims = Buffer.from(JSON.stringify({ tenant_id: t })).toString('base64url')
      expect(
        (
          await client.call<{ instance: string }>('analytics', '/api/v1/analytics/summary', {
            token: `e30.${claims}.sig`,
          })
        ).instance,
      ).toBe(owner)
    }
  })
})

describe('a request that reaches an instance which just handed its tenant over', () => {
  const log = createLogger('upstream-test')
  log.level = -999
  /** `old` refuses with 421 naming `owner`; `fresh` serves. */
  const servers: Array<ReturnType<typeof Bun.serve>> = []
  let old = ''
  let fresh = ''
  let named = ''
  beforeAll(() => {
    const refusing = Bun.serve({
      port: 0,
      fetch: () =>
        Response.json(
          { code: 'TENANT_ELSEWHERE' },
          { status: 421, headers: { [OWNER_HEADER]: named } },
        ),
    })
    const serving = Bun.serve({
      port: 0,
      fetch: async (req) => Response.json({ served: true, body: await req.text() }),
    })
    servers.push(refusing, serving)
    old = refusing.url.origin
    fresh = serving.url.origin
  })
  afterAll(() => {
    for (const s of servers) s.stop(true)
  })
  const sendTo = (list: string[]) =>
    createUpstream({
      discovery: staticDiscovery({ analytics: list }),
      observe: createObserver({ log, accessLog: 'off' }),
    })
  const tenantOn = (list: string[], url: string) => tenants.find((t) => ownerOf(t, list) === url)!

  it('goes once to the owner the refusal names, body and all', async () => {
    const list = [old, fresh]
    named = fresh
    const t = tenantOn(list, old)
    const res = await sendTo(list)('analytics', '/api/v1/parser/transactions', {
      method: 'POST',
      headers: new Headers({ 'x-tenant-id': t, 'content-type': 'application/json' }),
      body: new TextEncoder().encode('{"rows":1}').buffer as ArrayBuffer,
      budget: 2000,
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ served: true, body: '{"rows":1}' })
  })

  it('goes once to the owner from a service client too', async () => {
    const list = [old, fresh]
    named = fresh
    const t = tenantOn(list, old)
    const client = createServiceClient(staticDiscovery({ analytics: list }))
    const answer = await client.call<{ served: boolean; body: string }>(
      'analytics',
      '/api/v1/parser/transactions',
      { method: 'POST', tenant: t, body: { rows: 1 } },
    )
    expect(answer).toEqual({ served: true, body: '{"rows":1}' })
  })

  it('goes nowhere discovery does not list, and the client never sees the header', async () => {
    const list = [old, fresh]
    named = 'http://127.0.0.1:9'
    const t = tenantOn(list, old)
    const res = await sendTo(list)('analytics', '/api/v1/analytics/summary', {
      method: 'GET',
      headers: new Headers({ 'x-tenant-id': t }),
      body: null,
      budget: 2000,
    })
    expect(res.status).toBe(421)
    const out = withHeaders(res, 'req_1', undefined)
    expect(out.headers.get(OWNER_HEADER)).toBeNull()
  })
})
