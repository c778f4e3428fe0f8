import type { Logger } from './log.ts'

/**
 * Runs `work` until it succeeds, every `everyMs` (500 ms) while what it needs comes up, saying
 * `waiting` on the first failure and every `logEvery`-th after it; gives up after `attempts`, or
 * once stopped. Resolves to whether the work was done.
 *
 * @example
 * await retryUntilDone(() => load(), { waiting: 'waiting for auth', log, logEvery: 10, stopped })
 */
export async function retryUntilDone(
  work: () => Promise<void>,
  opts: {
    waiting: string
    log: Logger
    logEvery: number
    attempts?: number
    stopped: () => boolean
    everyMs?: number
    /** Told with each `waiting` line. */
    fields?: Record<string, unknown>
  },
): Promise<boolean> {
  for (let attempt = 1; !opts.stopped() && attempt <= (opts.attempts ?? Infinity); attempt++) {
    try {
      await work()
      return true
    } catch (err) {
      if (attempt === 1 || attempt % opts.logEvery === 0)
        opts.log.info(opts.waiting, { ...opts.fields, attempt, error: (err as Error).message })
      await Bun.sleep(opts.everyMs ?? 500)
    }
  }
  return false
}
