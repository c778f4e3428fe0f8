import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type Route, routes } from '../schema/routes.ts'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

type Operation = { security?: Array<Record<string, string[]>> }
type Doc = { paths: Record<string, Record<string, Operation>>; 'x-mmp-unavailable'?: string[] }

/** `{name}` → `:name`: the manifest's way of writing a documented path. */
const asPattern = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1')

let p: TestPlatform
let documented: Array<{ method: string; path: string; op: Operation }>

beforeAll(async () => {
  p = await startTestPlatform()
  const doc = (await (await fetch(`${p.gateway}/openapi.json`)).json()) as Doc
  expect(doc['x-mmp-unavailable']).toBeUndefined()
  documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  )
}, 60_000)
afterAll(() => p?.dispose())

describe('the route manifest against the OpenAPI document', () => {
  it('has exactly one entry for every documented route', () => {
    expect(documented.length).toBeGreaterThan(50)
    const wrong = documented
      .map(({ method, path }) => {
        const entries = routes.filter((r) => r.method === method && r.path === asPattern(path))
        return { route: `${method} ${path}`, entries: entries.length }
      })
      .filter((r) => r.entries !== 1)
    expect(wrong).toEqual([])
  })

  it('documents every entry, so none is stale', () => {
    const seen = new Set(documented.map(({ method, path }) => `${method} ${asPattern(path)}`))
    const stale = routes.filter((r) => !seen.has(`${r.method} ${r.path}`)).map((r) => r.path)
    expect(stale).toEqual([])
  })

  it('agrees with the document on which routes need no token', () => {
    const entryOf = (method: string, path: string) =>
      routes.find((r) => r.method === method && r.path === asPattern(path)) as Route
    const disagree = documented
      .map(({ method, path, op }) => ({
        route: `${method} ${path}`,
        documented: (op.security?.length ?? 0) > 0 ? 'token' : 'open',
        manifest: entryOf(method, path)?.access === 'token' ? 'token' : 'open',
      }))
      .filter((r) => r.documented !== r.manifest)
    expect(disagree).toEqual([])
  })
})

describe('what the manifest tells clients', () => {
  it('states security on every operation: [] for public routes, the bearer token otherwise', () => {
    const wrong = documented
      .filter(({ method, path, op }) => {
        const route = routes.find((r) => r.method === method && r.path === asPattern(path))
        const want = route?.access === 'token' ? [{ bearer: [] }] : []
        return JSON.stringify(op.security) !== JSON.stringify(want)
      })
      .map(({ method, path }) => `${method} ${path}`)
    expect(wrong).toEqual([])
    const login = documented.find((d) => d.path === '/api/v1/auth/login')!
    expect(login.op.security).toEqual([])
  })

  it('answers a wrong method on a known path with 405 and Allow, at the gateway and a service port', async () => {
    for (const base of [p.gateway, p.url('analytics')]) {
      const res = await fetch(`${base}/api/v1/analytics/summary`, { method: 'POST' })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('GET')
      expect(res.headers.get('content-type')).toContain('application/problem+json')
      expect(await res.json()).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' })
    }
    const tenants = await fetch(`${p.gateway}/api/v1/tenants/acme`, { method: 'POST' })
    expect(tenants.status).toBe(405)
    expect(tenants.headers.get('allow')?.split(', ').sort()).toEqual([
      'DELETE',
      'GET',
      'PATCH',
      'PUT',
    ])
    const unknown = await fetch(`${p.gateway}/api/v1/analytics/nothing-here`)
    expect(unknown.status).not.toBe(405)
  })
})
