import { PURPOSE_HEADER } from '../services/kernel/entitlements.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import type { ServiceName } from '../services/kernel/service-names.ts'
import { PLATFORM_SYNC } from '../services/kernel/tokens.ts'

/**
 * A `GET` of what another part owns, asked as the platform (the `platform-sync` purpose under the
 * hop signature): a part needs the hop key for it, not the JWT private key.
 *
 * @example
 * const list = await platformRead<{ data: Tenant[] }>(client, 'tenant', '/api/v1/tenants')
 */
export function platformRead<T>(
  client: ServiceClient,
  service: ServiceName,
  path: string,
  deadline?: number,
): Promise<T> {
  return client.call<T>(service, path, {
    headers: { [PURPOSE_HEADER]: PLATFORM_SYNC },
    ...(deadline ? { deadline } : {}),
  })
}

/**
 * Runs `work` until it succeeds, every half second while its owner comes up, saying `waiting` on
 * the first failure and every `logEvery`-th after it; gives up after `attempts`, or once stopped.
 */
export async function retryUntilDone(
  work: () => Promise<void>,
  opts: {
    waiting: string
    log: Logger
    logEvery: number
    attempts?: number
    stopped: () => boolean
  },
): Promise<void> {
  for (let attempt = 1; !opts.stopped() && attempt <= (opts.attempts ?? Infinity); attempt++) {
    try {
      await work()
      return
    } catch (err) {
      if (attempt === 1 || attempt % opts.logEvery === 0)
        opts.log.info(opts.waiting, { attempt, error: (err as Error).message })
      await Bun.sleep(500)
    }
  }
}
