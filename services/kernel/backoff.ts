import { ExponentialBackoff, type IBackoff, noJitterGenerator } from 'cockatiel'

/** One wait of a backoff: `duration` ms, and the wait after it. */
export type BackoffStep = IBackoff<unknown>

/** A backoff policy: where each failing thing's waits start. */
export type BackoffPolicy = ExponentialBackoff<unknown>

/**
 * The platform's backoff, on cockatiel: exponential without jitter, `initialMs` doubling up to
 * `maxMs`. Each failing thing keeps its last step; `nextWait(policy, step)` is its next wait (the
 * first when it has none), and a success forgets the step.
 *
 * @example
 * const policy = exponentialBackoff({ initialMs: 1000, maxMs: 30_000 })
 * let step = nextWait(policy, undefined) // 1000 ms
 * step = nextWait(policy, step) // 2000 ms
 */
export function exponentialBackoff({
  initialMs,
  maxMs,
}: {
  initialMs: number
  maxMs: number
}): BackoffPolicy {
  return new ExponentialBackoff({
    generator: noJitterGenerator,
    initialDelay: initialMs,
    maxDelay: maxMs,
  })
}

/** The wait after `step`, or the policy's first wait when there is no step yet. */
export function nextWait(policy: BackoffPolicy, step: BackoffStep | undefined): BackoffStep {
  return (step ?? policy).next(undefined)
}
