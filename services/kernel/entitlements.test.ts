import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../../schema/auth/migrations.ts'
import type { Entitlements } from '../../schema/profiles.ts'
import { createRegistry } from '../../tenants/registry.ts'
import { assertEntitled, readEntitlements, writeEntitlements } from './entitlements.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const of = (status: Entitlements['status']): Entitlements => ({
  plan: 'free',
  status,
  period_start: '2026-11-01T00:00:00.000Z',
  period_end: '2026-12-01T00:00:00.000Z',
  limits: { transactions: 1000 },
  used: { transactions: 0 },
  updated_at: new Date().toISOString(),
})

describe('entitlements', () => {
  it('are seen by another process of the data dir as soon as billing writes them', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mmp-entitlements-'))
    dirs.push(dataDir)
    const worker = createRegistry({ dataDir, migrations: () => migrations })
    worker.setPlacement('acme', { isolation: 'shared' })
    writeEntitlements(worker, 'acme', of('suspended'))
    expect(() => assertEntitled(worker, 'acme', { write: true })).toThrow(
      expect.objectContaining({ status: 402 }),
    )
    // Paid, in billing's own process: the worker that refused a moment ago lets the next write
    // through, with no time for a cache to expire in between.
    const billing = Bun.spawnSync({
      cmd: [
        process.execPath,
        '--eval',
        `import { createRegistry } from ${JSON.stringify(join(import.meta.dir, '../../tenants/registry.ts'))}
         import { writeEntitlements } from ${JSON.stringify(join(import.meta.dir, 'entitlements.ts'))}
         const registry = createRegistry({ dataDir: process.env.DIR, migrations: () => [] })
         writeEntitlements(registry, 'acme', JSON.parse(process.env.E))`,
      ],
      env: { ...process.env, DIR: dataDir, E: JSON.stringify(of('active')) },
    })
    expect(billing.exitCode).toBe(0)
    expect(readEntitlements(worker, 'acme')?.status).toBe('active')
    expect(() => assertEntitled(worker, 'acme', { write: true })).not.toThrow()
  })
})
