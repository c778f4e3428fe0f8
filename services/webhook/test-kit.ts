import { createClock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { createLogger } from '../kernel/log.ts'
import type { WebhookDeps } from './deps.ts'
import type { AttemptOutcome } from './queue.ts'
import { webhookConfig } from './settings.ts'

/** A 200 answer from an endpoint, as the dispatcher records it: for unit tests. */
export const OK_OUTCOME: AttemptOutcome = {
  at: '2026-01-01T00:00:00.000Z',
  statusCode: 200,
  latencyMs: 1,
  responseExcerpt: 'ok',
  error: null,
  ok: true,
}

/**
 * What a dispatcher over `db` needs in a unit test: a silent log, loopback endpoints allowed, no
 * rate limit that a test would reach, and the given lanes and retry schedule.
 */
export function testDispatcherDeps(
  db: Db,
  opts: { maxInFlight: number; retrySchedule: number[] },
): WebhookDeps {
  const log = createLogger('webhook-test')
  log.level = -999
  const config = webhookConfig({
    allowInsecure: true,
    allowHosts: [],
    retrySchedule: opts.retrySchedule,
    timeoutMs: 1000,
    rateLimit: 1_000_000,
    maxInFlight: opts.maxInFlight,
    secretKey: '',
  })
  return { db, config, clock: createClock(), log } as unknown as WebhookDeps
}
