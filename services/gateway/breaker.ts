import {
  BrokenCircuitError,
  type CircuitBreakerPolicy,
  CircuitState,
  circuitBreaker,
  handleAll,
  type IBreaker,
} from 'cockatiel'
import type { Logger } from '../kernel/log.ts'

export type BreakerState = 'closed' | 'open' | 'half-open'

export interface BreakerOptions {
  /** Failure share over the window that opens the breaker, 0–1. */
  threshold: number
  /** Calls needed in the window before it may open (opossum's volumeThreshold, DESIGN §13). */
  minRequests: number
  windowMs: number
  /** How long it stays open before one probe is let through. */
  halfOpenMs: number
}

/**
 * Failure rate over a rolling time window with a minimum volume. cockatiel's SamplingBreaker
 * keeps counts of buckets that saw no traffic for a long time, so an hour-old failure could
 * still count; here a bucket older than the window is dropped when read.
 */
export class WindowBreaker implements IBreaker {
  private readonly buckets: Array<{ at: number; ok: number; failed: number }>
  private readonly bucketMs: number

  constructor(
    private readonly opts: Pick<BreakerOptions, 'threshold' | 'minRequests' | 'windowMs'>,
    private readonly now: () => number = Date.now,
  ) {
    const n = 10
    this.bucketMs = Math.max(1, Math.ceil(opts.windowMs / n))
    this.buckets = Array.from({ length: n }, () => ({ at: -1, ok: 0, failed: 0 }))
  }

  get state(): unknown {
    return this.buckets.map((b) => ({ ...b }))
  }

  set state(value: unknown) {
    if (!Array.isArray(value)) return
    value.forEach((b, i) => {
      Object.assign(this.buckets[i] ?? {}, b)
    })
  }

  success(state: CircuitState): void {
    if (state === CircuitState.HalfOpen) this.reset()
    this.bucket().ok++
  }

  failure(state: CircuitState): boolean {
    this.bucket().failed++
    if (state !== CircuitState.Closed) return true
    const horizon = this.now() - this.opts.windowMs
    let ok = 0
    let failed = 0
    for (const b of this.buckets) {
      if (b.at <= horizon) continue
      ok += b.ok
      failed += b.failed
    }
    const total = ok + failed
    return total >= this.opts.minRequests && failed / total > this.opts.threshold
  }

  private bucket() {
    const slot = Math.floor(this.now() / this.bucketMs)
    const b = this.buckets[slot % this.buckets.length]!
    if (b.at !== slot * this.bucketMs) {
      b.at = slot * this.bucketMs
      b.ok = 0
      b.failed = 0
    }
    return b
  }

  private reset() {
    for (const b of this.buckets) {
      b.at = -1
      b.ok = 0
      b.failed = 0
    }
  }
}

/** Thrown instead of calling the upstream while its breaker is open or probing. */
export class BreakerOpen extends Error {
  constructor(readonly retryAfterMs: number) {
    super('the circuit breaker is open')
  }
}

export interface UpstreamBreaker {
  readonly state: BreakerState
  /**
   * Runs the call: failures are thrown errors and responses with a 5xx status. While open, and
   * while the single half-open probe is in flight, it throws BreakerOpen at once.
   */
  execute(call: () => Promise<Response>): Promise<Response>
}

const stateNames: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
}

/**
 * One breaker per upstream, made on first use. cockatiel drives closed → open → half-open with a
 * single probe; the window breaker above decides when to open.
 */
export function createBreakers(
  opts: BreakerOptions,
  hooks: { onChange?(upstream: string, state: BreakerState): void } = {},
) {
  const breakers = new Map<string, UpstreamBreaker>()

  const make = (upstream: string): UpstreamBreaker => {
    const policy: CircuitBreakerPolicy = circuitBreaker(
      handleAll.orWhenResult((r) => (r as Response).status >= 500),
      { halfOpenAfter: opts.halfOpenMs, breaker: new WindowBreaker(opts) },
    )
    let openedAt = 0
    policy.onBreak(() => {
      openedAt = Date.now()
    })
    policy.onStateChange((s) => hooks.onChange?.(upstream, stateNames[s]))
    const retryAfterMs = () => Math.max(0, openedAt + opts.halfOpenMs - Date.now())
    return {
      get state() {
        return stateNames[policy.state]
      },
      async execute(call) {
        // cockatiel queues callers behind the half-open probe; a gateway answers them at once.
        if (policy.state === CircuitState.HalfOpen) throw new BreakerOpen(opts.halfOpenMs)
        try {
          return await policy.execute(call)
        } catch (err) {
          if (err instanceof BrokenCircuitError) throw new BreakerOpen(retryAfterMs())
          throw err
        }
      },
    }
  }

  return {
    of(upstream: string): UpstreamBreaker {
      let b = breakers.get(upstream)
      if (!b) {
        b = make(upstream)
        breakers.set(upstream, b)
      }
      return b
    },
    states(): Record<string, BreakerState> {
      return Object.fromEntries([...breakers].map(([k, b]) => [k, b.state]))
    },
  }
}

/**
 * The gateway's breakers, one per upstream: half of at least 10 requests failing within 10 s
 * opens one for 5 s (unless `overrides` say otherwise); each change is a metric and a log line.
 */
export function upstreamBreakers({
  log,
  observe,
  overrides,
}: {
  log: Logger
  observe: { breaker(service: string, state: BreakerState): void }
  overrides?: Partial<BreakerOptions>
}) {
  const breakerOpts: BreakerOptions = {
    threshold: 0.5,
    minRequests: 10,
    windowMs: 10_000,
    halfOpenMs: 5_000,
    ...overrides,
  }
  return createBreakers(breakerOpts, {
    onChange(service, state) {
      observe.breaker(service, state)
      log[state === 'closed' ? 'info' : 'warn'](`circuit breaker for ${service} is ${state}`, {
        upstream: service,
        state,
      })
    },
  })
}
