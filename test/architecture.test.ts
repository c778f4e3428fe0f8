import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dir, '..')
const IMPORT =
  /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

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

/** Every relative import as [importer, imported], both relative to the repository root. */
function edges(): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const top of ['cmd', 'daemon', 'services', 'tenants', 'schema']) {
    for (const file of sources(join(root, top))) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2]
        if (!spec?.startsWith('.')) continue
        out.push([relative(root, file), relative(root, resolve(dirname(file), spec))])
      }
    }
  }
  return out
}

const serviceOf = (path: string) => /^services\/([^/]+)\//.exec(path)?.[1]

describe('architecture', () => {
  const all = edges()

  it('finds the imports it checks', () => {
    expect(all.length).toBeGreaterThan(50)
  })

  it('never lets a service import another service (only the kernel)', () => {
    const wrong = all.filter(([from, to]) => {
      const a = serviceOf(from)
      const b = serviceOf(to)
      // A unit test may run the M-Pesa simulator as the provider it talks to.
      if (from.endsWith('.test.ts') && b === 'simulator') return false
      return a && b && a !== 'kernel' && b !== 'kernel' && a !== b
    })
    expect(wrong).toEqual([])
  })

  it('keeps the kernel free of services, daemon and cmd', () => {
    const wrong = all.filter(
      ([from, to]) =>
        serviceOf(from) === 'kernel' &&
        ((serviceOf(to) && serviceOf(to) !== 'kernel') || /^(daemon|cmd)\//.test(to)),
    )
    expect(wrong).toEqual([])
  })

  it('keeps services, tenants and schema free of daemon and cmd', () => {
    const wrong = all.filter(
      ([from, to]) => /^(services|tenants|schema)\//.test(from) && /^(daemon|cmd)\//.test(to),
    )
    expect(wrong).toEqual([])
  })

  it('keeps schema a leaf: it imports only schema', () => {
    const wrong = all.filter(
      ([from, to]) => from.startsWith('schema/') && !to.startsWith('schema/'),
    )
    expect(wrong).toEqual([])
  })

  it('keeps the daemon out of cmd', () => {
    expect(all.filter(([from, to]) => from.startsWith('daemon/') && to.startsWith('cmd/'))).toEqual(
      [],
    )
  })

  it('reads the environment only in daemon/ and cmd/', () => {
    const readers = [
      ...sources(join(root, 'services')),
      ...sources(join(root, 'tenants')),
      ...sources(join(root, 'schema')),
    ]
      .filter((f) => !f.endsWith('.test.ts'))
      .filter((f) => readFileSync(f, 'utf8').includes('process.env'))
      .map((f) => relative(root, f))
    expect(readers).toEqual([])
  })
})
