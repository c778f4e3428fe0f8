import type { Relay } from '../services/kernel/events.ts'
import type { Logger } from '../services/kernel/log.ts'
import { onDescriptorsExhausted } from '../services/kernel/problem.ts'
import { createRegistry, type TenantRegistry } from '../tenants/registry.ts'
import type { Config } from './config.ts'
import { databaseCap, openFilesLimit } from './fd-limit.ts'
import { migrationsOf } from './migrations.ts'
import { synchronousOf } from './services.ts'

/**
 * The one database registry of this process (DESIGN §15: one cap for the whole process), its cap
 * lowered to what this process's open-files limit holds (daemon/fd-limit.ts). Every database
 * opened is handed to its service's relay; running out of descriptors anywhere (a socket, a JSON
 * file) releases half the idle handles, at most once a second, so the process recovers by itself.
 */
export function processRegistry(
  config: Config,
  log: Logger,
  relays: ReadonlyMap<string, Relay>,
): TenantRegistry {
  const replayMs = config.get<number>('outbox.replay_window_s') * 1000
  const configured = config.get<number>('registry.max_open')
  const fdLimit = openFilesLimit()
  const maxOpen = databaseCap(configured, fdLimit)
  if (maxOpen < configured)
    log.info('open databases capped by the open-files limit', {
      max_open: maxOpen,
      configured,
      open_files_limit: fdLimit,
    })
  const registry = createRegistry({
    dataDir: config.dataDir,
    migrations: migrationsOf,
    synchronous: synchronousOf,
    maxOpen,
    onOverCap: (open, max) =>
      log.warn('every open database is busy; the open-database cap is exceeded for now', {
        open,
        max_open: max,
      }),
    onOpen(db, info) {
      relays.get(info.service)?.watch(db, { replaySinceMs: info.firstInProcess ? replayMs : 0 })
    },
  })
  let shedAt = 0
  onDescriptorsExhausted(() => {
    if (Date.now() - shedAt < 1000) return
    shedAt = Date.now()
    if (registry.shed?.())
      log.warn('out of file descriptors: idle databases released', {
        open: registry.openCount?.(),
      })
  })
  return registry
}
