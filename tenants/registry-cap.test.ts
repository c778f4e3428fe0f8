import { afterEach, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../schema/auth/migrations.ts'
import { createRegistry } from './registry.ts'

const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'mmp-registry-cap-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** Descriptors this process holds on files under `dir`. */
const fdsUnder = (dir: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir)
    } catch {
      return false
    }
  }).length

const tenants = (r: ReturnType<typeof createRegistry>, n: number) =>
  Array.from({ length: n }, (_, i) => {
    r.setPlacement(`t-${i}`, { isolation: 'schema' })
    const db = r.tenant('auth', `t-${i}`)
    // Prepared statements kept alive used to keep a closed file open until the next GC.
    db.sqlite.query('SELECT count(*) FROM __migrations').get()
    db.orm.run('SELECT 1' as never)
    return db
  })

describe('the open-database cap', () => {
  it('frees the descriptors of a released handle at once', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    tenants(r, 40)
    expect(r.openCount?.()).toBe(8)
    expect(fdsUnder(dataDir)).toBeLessThanOrEqual(8 * 3)
    r.closeAll()
    expect(fdsUnder(dataDir)).toBe(0)
  })

  it('never releases a handle in a transaction, and reopens a released one on its next use', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    const [first] = tenants(r, 1)
    first!.write(() => {
      tenants(r, 20)
      expect(first!.closed).toBe(false)
    })
    const [held] = tenants(r, 1)
    tenants(r, 20)
    expect(held!.closed).toBe(true)
    // Code that kept the handle across an await still works: the handle reopens.
    expect(held!.sqlite.query<{ n: number }, []>('SELECT 1 AS n').get()?.n).toBe(1)
    expect(held!.closed).toBe(false)
    expect(r.openCount?.()).toBeLessThanOrEqual(8)
    // The registry gives out a fresh handle, not the released one (statement caches are per Db).
    tenants(r, 20)
    expect(r.tenant('auth', 't-0')).not.toBe(held)
  })

  it('closes every handle of a file together, so none leaves a descriptor behind', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    // Handles kept across an await (an outbox relay watching its database) reopen after their
    // release, beside the registry's new handle of the same file. SQLite keeps the descriptor of
    // a connection closed while another connection of the process holds the file, until they
    // have all closed: closing one of two left one behind (once 13 of them under a 256 limit).
    const kept = tenants(r, 2)
    const others = Array.from({ length: 6 }, (_, i) => {
      r.setPlacement(`u-${i}`, { isolation: 'schema' })
      return `u-${i}`
    })
    const use = (db: { sqlite: { query(sql: string): { get(): unknown } } }) =>
      db.sqlite.query('SELECT 1').get()
    tenants(r, 12).slice(2)
    for (let round = 0; round < 3; round++) {
      // The kept handles reopen, the registry gives out new ones beside them, others come back:
      // ten handles for a cap of eight, the kept ones the least recently used.
      for (const db of kept) use(db)
      for (let i = 0; i < 2; i++) use(r.tenant('auth', `t-${i}`))
      for (const id of others) use(r.tenant('auth', id))
      expect(fdsUnder(dataDir)).toBeLessThanOrEqual((r.openCount?.() ?? 0) * 3)
    }
    r.closeAll()
    expect(fdsUnder(dataDir)).toBe(0)
  })

  it('keeps a held handle and platform handles open past the cap', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    const platform = r.platform('auth')
    const [held] = tenants(r, 1)
    const release = held!.hold()
    tenants(r, 20)
    expect(platform.closed).toBe(false)
    expect(held!.closed).toBe(false)
    release()
    tenants(r, 20)
    expect(held!.closed).toBe(true)
    expect(platform.closed).toBe(false)
  })

  it('does not let a released handle recreate a file closed for deletion', () => {
    const dataDir = fresh()
    const r = createRegistry({ dataDir, migrations: () => migrations, maxOpen: 8 })
    const [old] = tenants(r, 1)
    tenants(r, 20)
    expect(old!.closed).toBe(true)
    r.closePath?.(old!.path)
    rmSync(old!.path)
    expect(() => old!.sqlite).toThrow(/closed/)
    expect(existsSync(old!.path)).toBe(false)
  })
})
