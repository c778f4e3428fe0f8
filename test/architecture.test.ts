import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * The direction of STYLE.md, read from the imports: `cmd → daemon → services/<x> →
 * services/kernel → tenants → schema` (an arrow may skip layers downward, never point up or
 * sideways), no import cycles, `cmd/` only through a service's public module, no service file over
 * 400 lines, no `process.env` below daemon/.
 */

/**
 * What is wrong today, each entry to be fixed in the code and then deleted here. An entry that no
 * longer happens fails the test too, so this list only shrinks.
 */
const ALLOWED = {
  cycles: [] as string[],
  arrows: [] as string[],
  cmdInternals: [] as string[],
  longFiles: [] as string[],
  env: [] as string[],
}

const root = resolve(import.meta.dir, '..')
const LAYERS = ['cmd', 'daemon', 'services', 'tenants', 'schema']
const IMPORT =
  /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g
const MAX_LINES = 400

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const full = join(dir, name)
    if (statSync(full).isDirectory()) out.push(...sources(full))
    else if (name.endsWith('.ts')) out.push(full)
  }
  return out
}

/** Tests, and a service's test support beside them (`test-kit.ts`, imported only by its tests). */
const isTest = (path: string) => path.endsWith('.test.ts') || path.endsWith('/test-kit.ts')
const files = LAYERS.flatMap((top) => sources(join(root, top))).map((f) => relative(root, f))

/** Every relative import as [importer, imported], both relative to the repository root. */
function edges(): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8')
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]
      if (!spec?.startsWith('.')) continue
      out.push([file, relative(root, resolve(root, dirname(file), spec))])
    }
  }
  return out
}

const serviceOf = (path: string) => /^services\/([^/]+)\//.exec(path)?.[1]

/** The layer a path is in, ranked from the top (0) down; undefined outside the five trees. */
function rankOf(path: string): number | undefined {
  const top = path.split('/')[0]!
  if (top === 'services') return serviceOf(path) === 'kernel' ? 3 : 2
  return { cmd: 0, daemon: 1, tenants: 4, schema: 5 }[top]
}
const layerOf = (path: string) =>
  path.startsWith('services/') ? `services/${serviceOf(path)}` : path.split('/')[0]!

/**
 * The import cycles (strongly connected components of more than one file, or a file importing
 * itself), each named by its files in order: `a.ts ⇄ b.ts`.
 */
function cycles(graph: Map<string, string[]>): string[] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    for (;;) {
      const w = stack.pop()!
      onStack.delete(w)
      component.push(w)
      if (w === v) break
    }
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort().join(' ⇄ '))
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found.sort()
}

/** Fails naming every finding not allowed, and every allowed one that no longer happens. */
function expectOnly(
  found: string[],
  allowed: string[],
  why: string | ((finding: string) => string),
): void {
  const reason = typeof why === 'string' ? () => why : why
  const unexpected = found.filter((f) => !allowed.includes(f)).map((f) => `${f}: ${reason(f)}`)
  const fixed = allowed
    .filter((a) => !found.includes(a))
    .map((a) => `${a}: fixed, delete it from ALLOWED in test/architecture.test.ts`)
  expect([...unexpected, ...fixed]).toEqual([])
}

describe('architecture', () => {
  const all = edges()
  const code = all.filter(([from]) => !isTest(from))

  it('finds the imports it checks', () => {
    expect(all.length).toBeGreaterThan(50)
    expect(files).toContain('services/kernel/index.ts')
  })

  it('finds cycles and wrong arrows in a graph made to have them', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts', 'a.ts']],
      ['e.ts', []],
    ])
    expect(cycles(graph)).toEqual(['a.ts ⇄ b.ts ⇄ c.ts', 'd.ts'])
    const order = ['cmd/x.ts', 'daemon/x.ts', 'services/a/x.ts', 'services/kernel/x.ts']
    const ranks = [...order, 'tenants/x.ts', 'schema/x.ts'].map(rankOf)
    expect(ranks).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('has no import cycle among cmd/, daemon/, services/, tenants/ and schema/', () => {
    const graph = new Map<string, string[]>(files.map((f) => [f, []]))
    for (const [from, to] of all) graph.get(from)!.push(to)
    expectOnly(cycles(graph), ALLOWED.cycles, 'these files import each other in a cycle')
    // Between layers too: one folder importing another that imports it back.
    const layers = new Map<string, string[]>()
    for (const [from, to] of code) {
      if (rankOf(to) === undefined || layerOf(from) === layerOf(to)) continue
      layers.set(layerOf(from), [...(layers.get(layerOf(from)) ?? []), layerOf(to)])
      if (!layers.has(layerOf(to))) layers.set(layerOf(to), [])
    }
    expectOnly(cycles(layers), [], 'these folders import each other in a cycle')
  })

  it('points every arrow down: cmd → daemon → services/<x> → services/kernel → tenants → schema', () => {
    const wrong = code
      .filter(([from, to]) => {
        const a = rankOf(from)
        const b = rankOf(to)
        if (a === undefined) return false
        // Static assets and package.json are read by the daemon; anything else outside is wrong.
        if (b === undefined)
          return !(from.startsWith('daemon/') && /^(web\/|package\.json)/.test(to))
        if (a === b) return a === 2 && serviceOf(from) !== serviceOf(to)
        return b < a
      })
      .map(([from, to]) => `${from} → ${to}`)
    expectOnly(wrong, ALLOWED.arrows, (arrow) => {
      const [from, to] = arrow.split(' → ') as [string, string]
      if (rankOf(to) === undefined) return `${layerOf(from)} may not import from outside the layers`
      return rankOf(from) === rankOf(to)
        ? `services/${serviceOf(from)} imports services/${serviceOf(to)}; call it over HTTP or an event`
        : `${layerOf(from)} may not import ${layerOf(to)}, which sits above it`
    })
  })

  it('never lets a service import another service, even from a test (except the simulator)', () => {
    const wrong = all
      .filter(([from, to]) => {
        const a = serviceOf(from)
        const b = serviceOf(to)
        // A unit test may run the M-Pesa simulator as the provider it talks to.
        if (isTest(from) && b === 'simulator') return false
        return a && b && a !== 'kernel' && b !== 'kernel' && a !== b
      })
      .map(([from, to]) => `${from} → ${to}`)
    expectOnly(wrong, [], 'a service imports another service')
  })

  it('never lets production code import a test or a test kit', () => {
    const wrong = code.filter(([, to]) => isTest(to)).map(([from, to]) => `${from} → ${to}`)
    expectOnly(wrong, [], 'production code imports test code; move what both need out of it')
  })

  it('lets cmd/ reach a service only through its public module (index.ts or public.ts)', () => {
    const wrong = all
      .filter(
        ([from, to]) =>
          from.startsWith('cmd/') &&
          serviceOf(to) !== undefined &&
          !/^services\/[^/]+\/(index|public)(\.ts)?$/.test(to),
      )
      .map(([from, to]) => `${from} → ${to}`)
    expectOnly(
      wrong,
      ALLOWED.cmdInternals,
      "cmd/ imports a service's internals; export it from the service's index.ts or public.ts",
    )
  })

  it(`keeps every file under services/ (tests aside) within ${MAX_LINES} lines`, () => {
    const long = files
      .filter((f) => f.startsWith('services/') && !isTest(f))
      .filter((f) => readFileSync(join(root, f), 'utf8').split('\n').length > MAX_LINES)
    expectOnly(long, ALLOWED.longFiles, `over ${MAX_LINES} lines; split it by what it does`)
  })

  it('reads the environment only in daemon/ and cmd/', () => {
    const readers = files
      .filter((f) => /^(services|tenants|schema)\//.test(f) && !isTest(f))
      .filter((f) => readFileSync(join(root, f), 'utf8').includes('process.env'))
    expectOnly(
      readers,
      ALLOWED.env,
      'reads process.env; read it once in daemon/config and pass the value down',
    )
  })

  it('resolves every relative import to a file that exists', () => {
    const missing = all
      .filter(([, to]) => !existsSync(join(root, to)))
      .map(([from, to]) => `${from} → ${to}`)
    expect(missing).toEqual([])
  })
})
