import { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLease } from './lease.ts'

const file = () => join(mkdtempSync(join(tmpdir(), 'mmp-lease-')), 'run', 'leases.db')

describe('the background lease', () => {
  it('has one holder at a time, and goes to another worker when its holder dies', () => {
    const path = file()
    const dead = new Set<number>()
    const alive = (pid: number) => !dead.has(pid)
    const a = openLease(path, 'background:all', { pid: 101, alive })
    const b = openLease(path, 'background:all', { pid: 102, alive })
    expect(a.tryAcquire()).toBe(true)
    expect(b.tryAcquire()).toBe(false)
    expect(a.renew()).toBe(true)
    expect(b.holder()).toBe(101)
    dead.add(101)
    expect(b.tryAcquire()).toBe(true)
    // The old holder, were it only paused, finds the lease gone and must stop.
    expect(a.renew()).toBe(false)
    expect(b.renew()).toBe(true)
  })

  it('goes to another worker once a hung holder lets it expire', () => {
    const path = file()
    let now = 1_000
    const alive = () => true
    const a = openLease(path, 'background:all', { pid: 201, ttlMs: 3000, now: () => now, alive })
    const b = openLease(path, 'background:all', { pid: 202, ttlMs: 3000, now: () => now, alive })
    expect(a.tryAcquire()).toBe(true)
    now += 2999
    expect(b.tryAcquire()).toBe(false)
    now += 2
    expect(b.tryAcquire()).toBe(true)
    expect(a.renew()).toBe(false)
  })

  it('keeps the leases of different sets of parts apart', () => {
    const path = file()
    const front = openLease(path, 'background:auth,gateway', { pid: 301 })
    const back = openLease(path, 'background:payment,webhook', { pid: 302 })
    expect(front.tryAcquire()).toBe(true)
    expect(back.tryAcquire()).toBe(true)
  })

  it('counts a holder that exited as dead at once', async () => {
    const path = file()
    const child = Bun.spawn(['true'])
    const a = openLease(path, 'background:all', { pid: child.pid })
    expect(a.tryAcquire()).toBe(true)
    await child.exited
    const b = openLease(path, 'background:all', { pid: process.pid })
    expect(b.tryAcquire()).toBe(true)
  })

  it('counts a holder as dead once its pid belongs to another process (a pid handed out again)', async () => {
    const path = file()
    const other = Bun.spawn(['sleep', '30'])
    try {
      // The holder was a process that had the pid before this one: it started at another time.
      const gone = openLease(path, 'tenant-plan:acme', {
        pid: other.pid,
        ttlMs: 3_600_000,
        startOf: () => 1,
      })
      expect(gone.tryAcquire()).toBe(true)
      const b = openLease(path, 'tenant-plan:acme', { pid: process.pid, ttlMs: 3_600_000 })
      expect(b.tryAcquire()).toBe(true)
      b.release()
      // The same live process holding it keeps it.
      const live = openLease(path, 'tenant-plan:acme', { pid: other.pid, ttlMs: 3_600_000 })
      expect(live.tryAcquire()).toBe(true)
      expect(b.tryAcquire()).toBe(false)
    } finally {
      other.kill()
    }
  })

  it('reads a lease file written before start times were kept', () => {
    const path = file()
    const old = openLease(path, 'background:all', { pid: 401 })
    old.close()
    const db = new Database(path)
    db.run('DROP TABLE lease')
    db.run(
      'CREATE TABLE lease (name TEXT PRIMARY KEY, pid INTEGER NOT NULL, expires_at INTEGER NOT NULL)',
    )
    db.run("INSERT INTO lease VALUES ('background:all', ?, ?)", [process.pid, Date.now() + 60_000])
    db.close()
    const other = openLease(path, 'background:all', { pid: 402, alive: () => true })
    expect(other.tryAcquire()).toBe(false)
    expect(other.holder()).toBe(process.pid)
  })
})
