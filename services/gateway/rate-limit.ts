/**
 * Token buckets (DESIGN §5): each key (a tenant, or a client IP on unauthenticated routes) gets
 * `rate` tokens per second up to `rate × burst`; a request takes one. Buckets are created lazily
 * and idle full ones are swept when the map grows, so memory follows active keys only.
 */
export interface RateVerdict {
  ok: boolean
  /** The bucket size (requests that may be made at once). */
  limit: number
  remaining: number
  /** Seconds until the bucket is full again (or, when refused, until one request is allowed). */
  reset: number
  /** Seconds to wait when refused. */
  retryAfter: number
}

interface Bucket {
  tokens: number
  at: number
}

export interface RateLimiter {
  take(key: string, ratePerSec: number, burstFactor: number): RateVerdict
  /** The bucket's state without spending a token. */
  peek(key: string, ratePerSec: number, burstFactor: number): RateVerdict
  readonly size: number
}

export function createRateLimiter(
  opts: { now?: () => number; maxKeys?: number } = {},
): RateLimiter {
  const now = opts.now ?? Date.now
  const maxKeys = opts.maxKeys ?? 50_000
  const buckets = new Map<string, Bucket>()

  const sweep = (at: number) => {
    // A bucket idle this long is full again (burst factor ≤ 100 s of tokens): nothing to keep.
    for (const [key, b] of buckets) if (at - b.at > 120_000) buckets.delete(key)
    if (buckets.size >= maxKeys) buckets.clear()
  }

  const refill = (key: string, rate: number, capacity: number, at: number): Bucket => {
    let b = buckets.get(key)
    if (!b) {
      if (buckets.size >= maxKeys) sweep(at)
      b = { tokens: capacity, at }
      buckets.set(key, b)
      return b
    }
    if (at > b.at) {
      b.tokens = Math.min(capacity, b.tokens + ((at - b.at) * rate) / 1000)
      b.at = at
    }
    return b
  }

  return {
    take(key, rate, burstFactor) {
      const capacity = Math.max(1, Math.round(rate * burstFactor))
      const b = refill(key, rate, capacity, now())
      if (b.tokens >= 1) {
        b.tokens -= 1
        return rateVerdict(true, b.tokens, rate, capacity)
      }
      return rateVerdict(false, b.tokens, rate, capacity)
    },
    peek(key, rate, burstFactor) {
      const capacity = Math.max(1, Math.round(rate * burstFactor))
      const b = buckets.get(key)
      if (!b) return rateVerdict(true, capacity, rate, capacity)
      const tokens = Math.min(capacity, b.tokens + ((now() - b.at) * rate) / 1000)
      return rateVerdict(true, tokens, rate, capacity)
    },
    get size() {
      return buckets.size
    },
  }
}

/** The answer for a bucket holding `tokens` of `capacity`, refilled at `rate` per second. */
export function rateVerdict(
  ok: boolean,
  tokens: number,
  rate: number,
  capacity: number,
): RateVerdict {
  const retryAfter = ok ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate))
  return {
    ok,
    limit: capacity,
    remaining: Math.max(0, Math.floor(tokens)),
    reset: ok ? Math.ceil((capacity - tokens) / rate) : retryAfter,
    retryAfter,
  }
}
