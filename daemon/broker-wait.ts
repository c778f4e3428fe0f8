import type { Logger } from '../services/kernel/log.ts'

/**
 * Connects to the broker in the background, as long as it takes: `mmp serve` answers reads and
 * logins while the broker is down, and the events written meanwhile wait in the outbox. Tries
 * again 250 ms doubling to 5 s apart; the log says so once it failed for 3 s, and every minute
 * after. Resolves true once connected, false when `stopped()` says to give up.
 *
 * @example
 * void untilConnected(() => bus.ready(), { log, what: 'revocations', stopped: () => closing })
 */
export async function untilConnected(
  connect: () => Promise<unknown>,
  opts: { log: Logger; what: string; stopped: () => boolean },
): Promise<boolean> {
  let loggedAt = 0
  // A broker starting beside this process (the supervisor's) answers within moments: quiet
  // until it has not for a few seconds.
  const quietUntil = Date.now() + 3000
  for (let attempt = 0; ; attempt++) {
    if (opts.stopped()) return false
    try {
      await connect()
      if (loggedAt) opts.log.info('the broker answers again', { for: opts.what })
      return true
    } catch (err) {
      if (opts.stopped()) return false
      if (Date.now() > quietUntil && Date.now() - loggedAt > 60_000) {
        loggedAt = Date.now()
        opts.log.warn('the broker does not answer; reads and logins are served, events wait', {
          for: opts.what,
          error: (err as Error)?.message,
        })
      }
      await Bun.sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)))
    }
  }
}
