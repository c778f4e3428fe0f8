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
