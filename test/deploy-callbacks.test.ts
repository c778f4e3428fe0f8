import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { settings } from '../daemon/settings.ts'
import { routes } from '../schema/routes.ts'

const deploy = join(import.meta.dir, '..', 'docs', 'deploy')
const read = (name: string) => readFileSync(join(deploy, name), 'utf8')

/** Every path the payment provider calls (the route manifest's `provider` routes). */
const callbacks = routes.filter((r) => r.access === 'provider').map((r) => r.path)

/** Safaricom's published callback addresses, as mmp's own default allow-list has them. */
const published = settings.find((s) => s.key === 'mpesa.c2b_source_ips')!.default as string[]

/**
 * The reverse-proxy examples let only Safaricom reach every provider callback path (STK, B2C,
 * status/balance/reversal results, C2B validation and confirmation), not only one of them.
 */
describe('proxy examples restrict every provider callback', () => {
  it('knows the callback paths', () => {
    expect(callbacks).toEqual(
      expect.arrayContaining([
        '/api/v1/payments/callback',
        '/api/v1/payments/c2b/confirmation',
        '/api/v1/payments/c2b/validation',
      ]),
    )
  })

  /** The first regex location of an nginx text matches each callback path and allows only Safaricom. */
  const expectNginxGuard = (conf: string) => {
    const m = /location ~ (\S+) \{([^}]*)\}/.exec(conf)
    expect(m).not.toBeNull()
    const pattern = new RegExp(m![1]!)
    for (const path of callbacks) expect(pattern.test(path), path).toBe(true)
    for (const other of ['/api/v1/payments/stkpush', '/api/v1/payments/c2b/register'])
      expect(pattern.test(other), other).toBe(false)
    const allowed = [...m![2]!.matchAll(/allow (\S+);/g)].map((a) => a[1])
    expect(allowed.sort()).toEqual([...published].sort())
    expect(m![2]).toContain('deny all;')
  }

  it('nginx.conf: one location matching each callback path allows only the published addresses', () => {
    expectNginxGuard(read('nginx.conf'))
  })

  it('self-hosting.md: the nginx example guards every callback path like nginx.conf', () => {
    const doc = readFileSync(join(deploy, '..', 'self-hosting.md'), 'utf8')
    const blocks = [...doc.matchAll(/```nginx\n([\s\S]*?)```/g)].map((b) => b[1]!)
    const guards = blocks.filter((b) => b.includes('/api/v1/payments/'))
    expect(guards.length).toBe(1)
    expectNginxGuard(guards[0]!)
  })

  it('Caddyfile: the @callbacks matcher names each callback path and the published addresses', () => {
    const conf = read('Caddyfile')
    const m = /@callbacks \{\s*path ([^\n]+)\n\s*not remote_ip ([^\n]+)\n/.exec(conf)
    expect(m).not.toBeNull()
    const paths = m![1]!.trim().split(/\s+/)
    const covers = (path: string) =>
      paths.some((p) => p === path || (p.endsWith('/*') && path.startsWith(p.slice(0, -1))))
    for (const path of callbacks) expect(covers(path), path).toBe(true)
    expect(m![2]!.trim().split(/\s+/).sort()).toEqual([...published].sort())
    expect(conf).toContain('respond @callbacks 403')
  })
})
