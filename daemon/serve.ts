import type { Config } from './config.ts'
import type { Platform, WorkerRole } from './platform.ts'

export type { Platform, WorkerRole } from './platform.ts'

/**
 * Starts every part of the platform that `config.only` names in this process (daemon/platform.ts).
 * Loaded on call: a supervisor of workers (daemon/workers.ts) never runs it, and its start-up
 * must not pay for importing every service, the broker client and the gateway.
 */
export async function startPlatform(config: Config, worker?: WorkerRole): Promise<Platform> {
  return (await import('./platform.ts')).startPlatform(config, worker)
}
