import { describe, expect, it } from 'bun:test'
import { fileBudget, openFilesFor } from './fd-limit.ts'

describe('the open-files limit mmp doctor advises', () => {
  it('is the smallest limit whose budget holds every database the install may keep open', () => {
    for (const databases of [1, 9, 20, 42, 100, 300, 1000, 5000]) {
      const limit = openFilesFor(databases)
      expect(fileBudget(databases, limit).registry).toBeGreaterThanOrEqual(databases)
      if (databases > 8) expect(fileBudget(databases, limit - 1).registry).toBeLessThan(databases)
    }
  })

  it('counts the databases held outside the registry too', () => {
    // 42 databases × 3 descriptors and 128 for sockets leave nothing for the lease, the rate
    // buckets or a backup's copy: the daemon would cap the registry below 42 at that limit.
    expect(fileBudget(42, 42 * 3 + 128).registry).toBeLessThan(42)
    expect(openFilesFor(42)).toBe(278)
  })
})
