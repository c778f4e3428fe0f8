import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { api, startTestPlatform, type TestPlatform } from './support/platform.ts'

const parts = [
  'gateway',
  'analytics',
  'auth',
  'tenant',
  'parser',
  'cashflow',
  'payment',
  'billing',
  'categorizer',
  'webhook',
  'simulator',
]

describe('mmp serve', () => {
  let p: TestPlatform
  beforeAll(async () => {
    p = await startTestPlatform()
  })
  afterAll(async () => {
    await p.dispose()
  })

  it('answers /health on every part with service, version, status and checks', async () => {
    for (const part of parts) {
      const res = await fetch(`${p.url(part)}/health`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as Record<string, unknown>
      expect(body).toMatchObject({ service: part === 'tenant' ? 'tenant' : part, status: 'ok' })
      expect(typeof body.version).toBe('string')
      expect(body.checks).toBeDefined()
    }
  })

  it('serves an OpenAPI document on every service', async () => {
    for (const part of parts.filter((x) => !['gateway', 'simulator'].includes(x))) {
      const res = await fetch(`${p.url(part)}/openapi.json`)
      expect(res.status).toBe(200)
      const doc = (await res.json()) as { openapi: string; info: { title: string } }
      expect(doc.openapi).toMatch(/^3\./)
      expect(doc.info.title).toContain('mmp')
    }
  })

  it('logs the operator in through the gateway with an EdDSA token', async () => {
    const token = await p.login()
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())
    expect(header.alg).toBe('EdDSA')
  })

  it('answers a wrong password and an unknown email with the same 401 problem', async () => {
    const a = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'operator@mmp.test',
      password: 'nope',
    })
    const b = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'nobody@mmp.test',
      password: 'nope',
    })
    expect(a.status).toBe(401)
    expect(b.status).toBe(401)
    expect(a.headers.get('content-type')).toContain('application/problem+json')
    expect(a.body.detail).toBe(b.body.detail)
  })

  it('routes every service prefix and refuses a missing token with 401 problem+json', async () => {
    for (const prefix of [
      'analytics/summary',
      'tenants/x',
      'cashflow/daily',
      'payments/status/x',
      'billing/plans',
      'categorize/rules',
      'webhooks/deliveries',
      'statements',
      'parser/transactions',
    ]) {
      // Statements and parser batches are POST-only routes (a GET is 405 before any token check).
      const post = prefix === 'statements' || prefix.startsWith('parser/')
      const res = post
        ? await api(p.gateway).post(`/api/v1/${prefix}`, {})
        : await api(p.gateway).get(`/api/v1/${prefix}`)
      expect(res.status).toBe(401)
      expect(res.body.code).toBe('UNAUTHENTICATED')
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  it('answers an unknown route with a 404 problem carrying the request id', async () => {
    const res = await api(p.gateway).get('/api/v1/nothing/here', {
      'x-request-id': 'test-request-0001',
    })
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
      request_id: 'test-request-0001',
    })
    expect(res.headers.get('x-request-id')).toBe('test-request-0001')
  })

  it('refuses malformed JSON with 400 and invalid fields with 422, never 500', async () => {
    const bad = await fetch(`${p.gateway}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":',
    })
    expect(bad.status).toBe(400)
    const invalid = await api(p.gateway).post('/api/v1/auth/login', {
      email: 'not-an-email',
      password: 1,
    })
    expect(invalid.status).toBe(422)
    expect(invalid.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'email',
      'password',
    ])
  })

  it('shuts down on SIGTERM with exit 0 and starts again on the same data dir', async () => {
    const token = await p.login()
    expect(await p.stop()).toBe(0)
    await p.restart()
    const again = await p.login()
    expect(again).not.toBe(token)
  })
})
