import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { startPeriodic } from '../kernel/periodic.ts'
import { createRateLimiter, type RateLimiter, rateVerdict } from './rate-limit.ts'

/** One exchange with the shared bucket of `key`: `giveBack` tokens returned, up to `want` taken. */
interface Exchange {
  key: string
  rate: number
  capacity: number
  giveBack: number
  want: number
}

/** A bucket's tokens at `at`: what it held, refilled at `rate` a second up to `capacity`. */
function refilled(
  row: { tokens: number; at: number } | null,
  { rate, capacity, at }: { rate: number; capacity: number; at: number },
): number {
  return row ? Math.min(capacity, row.tokens + (Math.max(0, at - row.at) * rate) / 1000) : capacity
}

/**
 * Token buckets shared by the worker processes of one `mmp serve --workers N`, so a tenant's rate
 * holds whichever worker the kernel hands its connections to. The true bucket lives in a small
 * SQLite file; each worker takes tokens from it in slices (an N-th of a quarter of the bucket, at
 * least one) and spends them locally, so the file is written once per slice and not once per
 * request. Unspent tokens go back to the bucket when a slice is a second old, so tokens a worker
 * holds do not starve the others. Tokens are never made, only moved: the workers together admit
 * at most what one bucket would.
 *
 * Splitting the bucket N ways instead would need connections spread evenly over the workers; one
 * client on one keep-alive connection would then get only an N-th of its rate.
 */
export function createSharedRateLimiter(
  path: string,
  opts: { workers: number; now?: () => number; sliceMs?: number },
): RateLimiter & { close(): void } {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const db = new Database(path, { create: true, strict: true })
  db.run('PRAGMA busy_timeout = 1000')
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = OFF')
  db.run(
    'CREATE TABLE IF NOT EXISTS bucket (key TEXT PRIMARY KEY, tokens REAL NOT NULL, at INTEGER NOT NULL)',
  )
  const now = opts.now ?? Date.now
  const sliceMs = opts.sliceMs ?? 1000
  const workers = Math.max(1, opts.workers)
  const read = db.query<{ tokens: number; at: number }, [string]>(
    'SELECT tokens, at FROM bucket WHERE key = ?',
  )
  const write = db.query('INSERT OR REPLACE INTO bucket (key, tokens, at) VALUES (?, ?, ?)')
  const fallback = createRateLimiter({ now })
  /** Tokens this worker took and has not spent yet, per key. */
  const local = new Map<string, { tokens: number; at: number }>()

  /** The bucket refilled to `at`, with `giveBack` returned and up to `want` tokens taken out. */
  const exchange = ({ key, rate, capacity, giveBack, want }: Exchange) =>
    db
      .transaction(() => {
        const at = now()
        let tokens = refilled(read.get(key), { rate, capacity, at })
        tokens = Math.min(capacity, tokens + giveBack)
        const granted = Math.min(want, Math.floor(tokens))
        tokens -= granted
        write.run(key, tokens, at)
        return { granted, tokens }
      })
      .immediate()

  const sliceOf = (capacity: number) => Math.max(1, Math.floor(capacity / (4 * workers)))

  // Slices left unspent for a second go back, so an idle worker does not sit on a tenant's tokens.
  const sweeper = startPeriodic({
    everyMs: sliceMs,
    firstInMs: sliceMs,
    backoff: { initialMs: sliceMs, maxMs: sliceMs },
    run: () => {
      const at = now()
      for (const [key, s] of local) {
        if (at - s.at < sliceMs) continue
        local.delete(key)
        if (s.tokens < 1) continue
        try {
          db.transaction(() => {
            const row = read.get(key)
            if (row) write.run(key, row.tokens + Math.floor(s.tokens), row.at)
          }).immediate()
        } catch {
          // A busy file: these tokens are lost to this second only.
        }
      }
    },
    // The sweep catches what a busy file throws: nothing else is expected here.
    onFailure: () => {},
  })

  return {
    take(key, rate, burstFactor) {
      const capacity = Math.max(1, Math.round(rate * burstFactor))
      const at = now()
      const held = local.get(key)
      if (held && held.tokens >= 1 && at - held.at < sliceMs) {
        held.tokens -= 1
        return rateVerdict(true, held.tokens, rate, capacity)
      }
      const back = held ? Math.floor(held.tokens) : 0
      local.delete(key)
      let exchanged: { granted: number; tokens: number }
      try {
        exchanged = exchange({ key, rate, capacity, giveBack: back, want: sliceOf(capacity) })
      } catch {
        // The file busy past its timeout: this worker's share of the rate decides meanwhile, as
        // Kong's fault-tolerant limiting does, rather than answering the request with an error.
        return fallback.take(key, rate / workers, burstFactor)
      }
      const { granted, tokens } = exchanged
      if (granted === 0) return rateVerdict(false, tokens, rate, capacity)
      local.set(key, { tokens: granted - 1, at })
      return rateVerdict(true, tokens + granted - 1, rate, capacity)
    },
    peek(key, rate, burstFactor) {
      const capacity = Math.max(1, Math.round(rate * burstFactor))
      let row: { tokens: number; at: number } | null
      try {
        row = read.get(key)
      } catch {
        return fallback.peek(key, rate / workers, burstFactor)
      }
      const tokens = refilled(row, { rate, capacity, at: now() })
      return rateVerdict(true, tokens + (local.get(key)?.tokens ?? 0), rate, capacity)
    },
    get size() {
      return local.size
    },
    close() {
      void sweeper.stop()
      db.close()
    },
  }
}
