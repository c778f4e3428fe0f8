import { afterAll, describe, expect, it } from 'bun:test'
import { DASHBOARD_CSP, startDashboard } from './serve.ts'

describe('dashboard server', () => {
  const dashboard = startDashboard({ hstsMaxAgeS: 31_536_000 })
  afterAll(() => dashboard.stop())
  const get = (path: string) => dashboard.fetch(new Request(`http://mmp.test${path}`))

  it('serves the page and every bundled asset with the security headers', async () => {
    const page = await get('/')
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:src|href)="(\/chunk-[^"]+)"/g)].map((m) => m[1]!)
    expect(assets.length).toBeGreaterThanOrEqual(2)
    for (const res of [page, ...(await Promise.all(assets.map(get)))]) {
      expect(res.status).toBe(200)
      expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      expect(res.headers.get('x-frame-options')).toBe('DENY')
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000')
    }
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'")
    expect(DASHBOARD_CSP).toContain("default-src 'self'")
  })

  it('claims only dashboard paths, never the API', () => {
    const claims = (method: string, path: string) =>
      dashboard.handles(new Request(`http://mmp.test${path}`, { method }))
    expect(claims('GET', '/')).toBe(true)
    expect(claims('GET', '/chunk-abc123.js')).toBe(true)
    expect(claims('POST', '/')).toBe(false)
    expect(claims('GET', '/api/v1/analytics/summary')).toBe(false)
    expect(claims('GET', '/health')).toBe(false)
    expect(claims('GET', '/docs')).toBe(false)
  })

  it('sends no HSTS unless configured', async () => {
    const plain = startDashboard()
    try {
      const res = await plain.fetch(new Request('http://mmp.test/'))
      expect(res.headers.get('strict-transport-security')).toBeNull()
    } finally {
      plain.stop()
    }
  })
})
