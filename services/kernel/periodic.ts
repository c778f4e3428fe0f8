import { type BackoffStep, exponentialBackoff, nextWait } from './backoff.ts'

/** A job started by {@link startPeriodic}. */
export interface Periodic {
  /** No further pass starts; resolves once a pass under way has finished. */
  stop(): Promise<void>
}

/**
 * Runs `run` now and then every `everyMs`; a pass that throws is told to `onFailure` and the next
 * one comes sooner or later by the backoff (cockatiel's exponential backoff without jitter:
 * `initialMs` doubling up to `maxMs`), back to `everyMs` after one success. Passes never overlap,
 * and the first one starts synchronously, so a synchronous `run` has run once `startPeriodic`
 * returns. `everyMs <= 0` runs it once. Timers do not hold the process open.
 *
 * @example
 * const job = startPeriodic({
 *   everyMs: 60_000,
 *   backoff: { initialMs: 5_000, maxMs: 60_000 },
 *   run: () => runCycle(b, clock.now()),
 *   onFailure: (err, { failures, retryMs }) => log.error('cycle failed', { failures, retryMs }),
 * })
 * await job.stop()
 */
export function startPeriodic(opts: {
  everyMs: number
  run: () => unknown
  backoff: { initialMs: number; maxMs: number }
  onFailure: (err: unknown, next: { failures: number; retryMs: number }) => void
  /** Wait this long before the first pass instead of running it at once. */
  firstInMs?: number
}): Periodic {
  const policy = exponentialBackoff(opts.backoff)
  let backoff: BackoffStep | undefined
  let failures = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  let stopped = false

  const schedule = (ms: number) => {
    if (stopped) return
    timer = setTimeout(pass, ms)
    timer.unref?.()
  }
  const settle = (err?: unknown) => {
    if (err === undefined) {
      failures = 0
      backoff = undefined
      if (opts.everyMs > 0) schedule(opts.everyMs)
      return
    }
    failures++
    backoff = nextWait(policy, backoff)
    opts.onFailure(err, { failures, retryMs: backoff.duration })
    if (opts.everyMs > 0) schedule(backoff.duration)
  }
  function pass() {
    timer = undefined
    let result: unknown
    try {
      result = opts.run()
    } catch (err) {
      settle(err ?? new Error('periodic job failed'))
      return
    }
    if (!(result instanceof Promise)) return settle()
    running = result.then(
      () => settle(),
      (err) => settle(err ?? new Error('periodic job failed')),
    )
    void running.finally(() => {
      running = undefined
    })
  }

  if (opts.firstInMs === undefined) pass()
  else schedule(opts.firstInMs)
  return {
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}
