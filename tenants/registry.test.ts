import { afterEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../schema/auth/migrations.ts'
import { createRegistry } from './registry.ts'

const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'mmp-registry-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('tenant registry', () => {
  it('sees a placement changed or taken back by another process of the data dir at once', () => {
    const dataDir = fresh()
    // Two registries on one data dir, as two workers have: each maps the profile counter.
    const a = createRegistry({ dataDir, migrations: () => migrations })
    const b = createRegistry({ dataDir, migrations: () => migrations })
    a.setPlacement('acme', { isolation: 'shared' })
    expect(b.pathOf('auth', 'acme')).toBe(join(dataDir, 'tenants', '_shared', 'auth.db'))
    expect(b.assertExists('acme')).toBe('acme')
    a.setPlacement('acme', { isolation: 'schema' })
    expect(b.pathOf('auth', 'acme')).toBe(join(dataDir, 'tenants', 'acme', 'auth.db'))
    a.removePlacement('acme')
    expect(() => b.assertExists('acme')).toThrow(/does not exist/)
  })

  it('puts a tenant without a dedicated placement in the shared database', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    expect(r.pathOf('auth', 'acme')).toBe(join(dataDir, 'tenants', '_shared', 'auth.db'))
    r.setPlacement('acme', { isolation: 'shared' })
    r.tenant('auth', 'acme')
    expect(existsSync(join(dataDir, 'tenants', '_shared', 'auth.db'))).toBe(true)
  })

  it('refuses a tenant that was never created or was erased, and creates no file', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    expect(() => r.tenant('analytics', 'nosuch')).toThrow(
      expect.objectContaining({ code: 'TENANT_NOT_FOUND', status: 404 }),
    )
    expect(existsSync(join(dataDir, 'tenants'))).toBe(false)
    r.setPlacement('gone', { isolation: 'schema' })
    r.tenant('analytics', 'gone')
    rmSync(join(dataDir, 'tenants', 'gone'), { recursive: true })
    r.evictPlacement?.('gone')
    expect(() => r.tenant('analytics', 'gone')).toThrow(/does not exist/)
    expect(existsSync(join(dataDir, 'tenants', 'gone'))).toBe(false)
    expect(r.tenant('analytics', 'platform').path).toContain('_shared')
  })

  it('gives a Pro tenant its own folder and an Enterprise tenant its dedicated path', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    r.setPlacement('pro-co', { isolation: 'schema' })
    r.setPlacement('big-co', { isolation: 'database', database_path: 'volumes/big-co' })
    expect(r.pathOf('auth', 'pro-co')).toBe(join(dataDir, 'tenants', 'pro-co', 'auth.db'))
    expect(r.pathOf('auth', 'big-co')).toBe(join(dataDir, 'volumes', 'big-co', 'auth.db'))
    r.tenant('auth', 'big-co')
    expect(r.existingTenantDatabases('auth')).toContain(
      join(dataDir, 'volumes', 'big-co', 'auth.db'),
    )
  })

  it('refuses tenant ids that could escape the data dir', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    for (const bad of ['../etc', 'a/b', '..', 'UPPER', '', 'x'.repeat(64), '-lead']) {
      expect(() => r.tenant('auth', bad)).toThrow(/tenant_id/)
    }
    expect(existsSync(join(dataDir, 'tenants'))).toBe(false)
  })

  it('keeps at most maxOpen handles and closes the least recently used', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    const handles = Array.from({ length: 10 }, (_, i) => {
      r.setPlacement(`t-${i}`, { isolation: 'schema' })
      return r.tenant('auth', `t-${i}`)
    })
    expect(handles[0]!.closed).toBe(true)
    expect(handles[1]!.closed).toBe(true)
    expect(handles[9]!.closed).toBe(false)
    const reopened = r.tenant('auth', 't-0')
    expect(reopened.closed).toBe(false)
  })

  it('applies migrations on first open and sets WAL and a busy timeout', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    const db = r.platform('auth')
    expect(
      db.sqlite.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()?.journal_mode,
    ).toBe('wal')
    expect(db.sqlite.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()?.timeout).toBe(
      5000,
    )
    const tables = db.sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type='table'")
      .all()
      .map((t) => t.name)
    expect(tables).toEqual(expect.arrayContaining(['users', 'outbox', 'inbox', '__migrations']))
  })

  it('lists an Enterprise database kept in the tenant folder once', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations })
    r.setPlacement('big-co', { isolation: 'database', database_path: 'tenants/big-co' })
    r.tenant('auth', 'big-co')
    expect(r.existingTenantDatabases('auth')).toEqual([
      join(dataDir, 'tenants', 'big-co', 'auth.db'),
    ])
    expect(r.pathAt?.('auth', { isolation: 'shared' }, 'big-co')).toBe(
      join(dataDir, 'tenants', '_shared', 'auth.db'),
    )
  })
})
