import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSharedRateLimiter } from './shared-rate.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** Two workers' limiters on one bucket file, on a clock the test moves. */
function twoWorkers() {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-shared-rate-'))
  dirs.push(dir)
  const clock = { at: Date.UTC(2030, 0, 1) }
  const opts = { workers: 2, now: () => clock.at, sliceMs: 60_000 }
  const path = join(dir, 'rate.db')
  return { clock, a: createSharedRateLimiter(path, opts), b: createSharedRateLimiter(path, opts) }
}

describe('rate limits shared by the workers', () => {
  it('admit together at most what one bucket holds, and refill at the rate', () => {
    const { clock, a, b } = twoWorkers()
    try {
      // 10 a second, burst 2: a bucket of 20, taken in slices of 20 / (4 × 2) = 2.
      let admitted = 0
      for (let i = 0; i < 30; i++) {
        if (a.take('acme', 10, 2).ok) admitted++
        if (b.take('acme', 10, 2).ok) admitted++
      }
      expect(admitted).toBe(20)
      expect(a.take('acme', 10, 2)).toMatchObject({ ok: false, limit: 20, retryAfter: 1 })
      // Another key has a bucket of its own.
      expect(b.take('kilo', 10, 2).ok).toBe(true)
      // Half a second later: five tokens back in the shared bucket.
      clock.at += 500
      expect(b.peek('acme', 10, 2)).toMatchObject({ ok: true, remaining: 5 })
      let later = 0
      while (a.take('acme', 10, 2).ok) later++
      expect(later).toBe(5)
    } finally {
      a.close()
      b.close()
    }
  })

  it('shows a full bucket for a key never seen, without spending from it', () => {
    const { a, b } = twoWorkers()
    try {
      expect(a.peek('acme', 5, 1)).toMatchObject({ ok: true, limit: 5, remaining: 5 })
      expect(b.peek('acme', 5, 1)).toMatchObject({ ok: true, remaining: 5 })
    } finally {
      a.close()
      b.close()
    }
  })
})
