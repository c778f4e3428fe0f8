import { describe, expect, it } from 'bun:test'
import {
  BODY_LIMITS,
  bodyLimitOf,
  findRoute,
  largestBodyLimit,
  ownerOf,
  routes,
  segmentOwners,
  tenantInPath,
} from './routes.ts'

const MiB = 1024 * 1024
/** A request path for a pattern, each parameter filled with a value no fixed word equals. */
const sample = (path: string) => path.replace(/:[a-z_]+/g, 'x1')

describe('the route manifest', () => {
  it('lists each method and path shape once, so a request finds at most one entry', () => {
    const shapes = routes.map((r) => `${r.method} ${r.path.replace(/:[a-z_]+/g, ':')}`)
    expect(shapes.filter((s, i) => shapes.indexOf(s) !== i)).toEqual([])
  })

  it('finds every entry from a request to it', () => {
    const wrong = routes.filter((r) => findRoute(r.method, sample(r.path)) !== r).map((r) => r.path)
    expect(wrong).toEqual([])
  })

  it('gives each route the service of its segment', () => {
    for (const r of routes) expect(r).toMatchObject({ service: ownerOf(r.path) })
    expect(Object.keys(segmentOwners).sort()).toEqual(
      [...new Set(routes.map((r) => r.segments[3] ?? ''))].sort(),
    )
  })

  it('routes every segment to its service, and nothing else', () => {
    expect(ownerOf('/api/v1/tenants/acme')).toBe('tenant')
    expect(ownerOf('/api/v1/payments/callback')).toBe('payment')
    expect(ownerOf('/api/v1/statements')).toBe('parser')
    expect(ownerOf('/api/v1/parser/sms')).toBe('parser')
    expect(ownerOf('/api/v1/categorize')).toBe('categorizer')
    expect(ownerOf('/api/v1/webhooks/whe_1')).toBe('webhook')
    expect(ownerOf('/api/v1/unknown')).toBeUndefined()
    expect(ownerOf('/api/v2/auth/login')).toBeUndefined()
  })
})

describe('public routes', () => {
  const access = (method: string, path: string) => findRoute(method, path)?.access ?? 'token'

  it('opens login, refresh, logout, accept-invite and the JWKS, by method', () => {
    for (const p of ['login', 'refresh', 'logout', 'accept-invite'])
      expect(access('POST', `/api/v1/auth/${p}`)).toBe('public')
    expect(access('GET', '/api/v1/auth/.well-known/jwks.json')).toBe('public')
    expect(access('GET', '/api/v1/auth/refresh')).toBe('token')
    expect(access('POST', '/api/v1/auth/login/')).toBe('token')
    expect(access('GET', '/api/v1/auth/me')).toBe('token')
  })

  it('marks the provider callbacks as the provider’s, and no other payment route', () => {
    expect(access('POST', '/api/v1/payments/callback')).toBe('provider')
    expect(access('POST', '/api/v1/payments/callback/b2c')).toBe('provider')
    expect(access('POST', '/api/v1/payments/callback/other')).toBe('token')
    expect(access('POST', '/api/v1/payments/stkpush')).toBe('token')
    for (const callback of ['callback/result', 'c2b/confirmation', 'c2b/validation'])
      expect(access('POST', `/api/v1/payments/${callback}`)).toBe('provider')
    // Five public auth routes and five provider callbacks (STK, B2C, results, C2B twice).
    expect(routes.filter((r) => r.access !== 'token').length).toBe(10)
  })
})

describe('body limits and budgets', () => {
  it('gives a statement upload 20 MiB and the bulk budget, and every other route 1 MiB', () => {
    expect(BODY_LIMITS).toEqual({ default: MiB, upload: 20 * MiB })
    expect(findRoute('POST', '/api/v1/statements')).toMatchObject({
      service: 'parser',
      body: 'upload',
      budget: 'bulk',
    })
    expect(routes.filter((r) => r.body === 'upload').map((r) => r.path)).toEqual([
      '/api/v1/statements',
    ])
  })

  it('gives the export and a tenant move between instances the bulk budget too, and nothing else', () => {
    expect(routes.filter((r) => r.budget === 'bulk').map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/analytics/export',
      'POST /api/v1/statements',
      'POST /api/v1/tenants/:tenant_id/instances',
    ])
  })

  it('looks a body limit up by service, method and path', () => {
    expect(bodyLimitOf('parser', 'POST', '/api/v1/statements')).toBe(20 * MiB)
    expect(bodyLimitOf('parser', 'POST', '/api/v1/parser/transactions')).toBe(MiB)
    expect(bodyLimitOf('parser', 'POST', '/api/v1/statements/extra')).toBe(MiB)
    expect(bodyLimitOf('parser', 'PUT', '/api/v1/statements')).toBe(MiB)
    // Another service's port never takes the upload class, even for the upload path.
    expect(bodyLimitOf('auth', 'POST', '/api/v1/statements')).toBe(MiB)
    expect(bodyLimitOf('parser', 'POST', '/api/v1/statements', { default: 10, upload: 99 })).toBe(
      99,
    )
  })

  it('gives each server the largest limit of its routes', () => {
    expect(largestBodyLimit('parser')).toBe(20 * MiB)
    expect(largestBodyLimit('auth')).toBe(MiB)
    expect(largestBodyLimit('gateway')).toBe(20 * MiB)
    expect(largestBodyLimit('gateway', { default: 64 * MiB, upload: 20 * MiB })).toBe(64 * MiB)
  })
})

describe('tenants named in a path', () => {
  it('finds the tenant where a route has :tenant_id, and not the fixed words beside it', () => {
    expect(tenantInPath('/api/v1/tenants/acme')).toBe('acme')
    expect(tenantInPath('/api/v1/tenants/acme/users')).toBe('acme')
    expect(tenantInPath('/api/v1/tenants/acme/users/usr_1')).toBe('acme')
    expect(tenantInPath('/api/v1/tenants')).toBeUndefined()
    expect(tenantInPath('/api/v1/tenants/')).toBeUndefined()
    expect(tenantInPath('/api/v1/billing/subscriptions/acme')).toBe('acme')
    expect(tenantInPath('/api/v1/billing/subscriptions/acme/events')).toBe('acme')
    expect(tenantInPath('/api/v1/billing/subscriptions/upgrade')).toBeUndefined()
    expect(tenantInPath('/api/v1/billing/usage/record')).toBeUndefined()
    expect(tenantInPath('/api/v1/billing/usage/acme')).toBe('acme')
    expect(tenantInPath('/api/v1/cashflow/summary/acme')).toBe('acme')
    expect(tenantInPath('/api/v1/auth/tenants/acme/users')).toBe('acme')
    expect(tenantInPath('/api/v1/cashflow/daily')).toBeUndefined()
    expect(tenantInPath('/api/v1/analytics/summary')).toBeUndefined()
  })

  it('names the tenant whatever the method, and under a deeper unknown path', () => {
    // The gateway refuses another tenant before the service says the route does not exist.
    expect(tenantInPath('/api/v1/tenants/acme/anything/else')).toBe('acme')
    expect(tenantInPath('/api/v1/cashflow/summary/acme/x')).toBe('acme')
    expect(tenantInPath('/api/v1/billing/usage/record/x')).toBeUndefined()
  })

  it('records where each tenant-naming route names it', () => {
    const named = routes.filter((r) => r.tenantAt !== undefined)
    for (const r of named) expect(r.segments[r.tenantAt!]).toBe(':tenant_id')
    expect(new Set(named.map((r) => r.segments[3]))).toEqual(
      new Set(['auth', 'billing', 'cashflow', 'tenants']),
    )
  })
})
