import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLease } from '../services/kernel/lease.ts'
import { createLogger } from '../services/kernel/log.ts'
import { eventually } from '../services/kernel/testing.ts'
import { holdBackground } from './background.ts'
import type { Config } from './config.ts'

describe('the background lease', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mmp-background-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('is renewed while the background work is still starting', async () => {
    const config = {
      dataDir,
      only: ['analytics'],
      get: (key: string) => (key === 'workers.lease_ttl_s' ? 2 : undefined),
    } as unknown as Config
    const log = createLogger('test')
    log.level = -999
    let started = false
    // A start that waits for ever (a broker that never answers).
    const held = await holdBackground(config, log, { index: 0, count: 2 }, () => {
      started = true
      return new Promise(() => {})
    })
    expect(started).toBe(true)
    // Another worker, whose process is alive, finds it held well past the time to live.
    const other = openLease(join(dataDir, 'run', 'leases.db'), 'background:analytics', {
      pid: process.pid + 1,
      alive: () => true,
    })
    const until = Date.now() + 4500
    await eventually(() => Date.now() > until, 6000, 'twice the time to live')
    expect(other.tryAcquire()).toBe(false)
    held.stop()
    held.close()
    other.close()
  }, 10_000)
})
