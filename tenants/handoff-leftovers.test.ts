import { describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { clearHandoffLeftovers, packTenant } from './handoff.ts'
import { fresh, registryOf, seed } from './move-test-kit.ts'

/** The pid of a process that ran and is gone (reaped, so it is no zombie either). */
function deadPid(): number {
  const child = Bun.spawnSync(['true'])
  expect(child.exitCode).toBe(0)
  return child.pid
}

describe('files a handoff killed mid-way left in run/handoff', () => {
  it('are removed, while the files of a live process stay', () => {
    const dataDir = fresh()
    const dir = join(dataDir, 'run', 'handoff')
    mkdirSync(dir, { recursive: true })
    const dead = deadPid()
    const file = (name: string) => {
      writeFileSync(join(dir, name), 'packed')
      return name
    }
    const gone = [
      file(`analytics-acme-${dead}.db`),
      file(`analytics-acme-${dead}.db-journal`),
      file(`analytics-acme-in-${dead}.db.part`),
    ]
    // A file of this pid older than this process: a namesake's from before a restart.
    const namesake = file(`payment-acme-${process.pid}.db`)
    const old = new Date(Date.now() - 3600_000 - process.uptime() * 1000)
    utimesSync(join(dir, namesake), old, old)
    const kept = [file(`analytics-other-${process.pid}.db`), file('notes.txt')]

    expect(clearHandoffLeftovers({ dataDir })).toBe(gone.length + 1)
    expect(readdirSync(dir).sort()).toEqual(kept.sort())
  })

  it('are removed when the move is run again on that instance', async () => {
    const registry = registryOf(fresh())
    seed(registry.tenant('analytics', 'acme'), 'acme', 20)
    const dir = join(registry.dataDir, 'run', 'handoff')
    mkdirSync(dir, { recursive: true })
    const left = join(dir, `analytics-acme-${deadPid()}.db`)
    writeFileSync(left, 'packed before a crash')

    const packed = await packTenant(registry, { service: 'analytics', tenantId: 'acme' })
    expect(packed).not.toBeNull()
    expect(existsSync(left)).toBe(false)
    expect(readdirSync(dir)).toEqual([packed!.path.slice(dir.length + 1)])
  })

  it('are none without a handoff folder', () => {
    expect(clearHandoffLeftovers({ dataDir: fresh() })).toBe(0)
  })
})
