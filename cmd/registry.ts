import type { Config } from '../daemon/config.ts'
import { migrationsOf } from '../daemon/migrations.ts'
import { synchronousOf } from '../daemon/services.ts'
import { createRegistry } from '../tenants/registry.ts'

/** The data dir's databases as a one-off command opens them: migrated, a few handles at a time. */
export function openRegistry(config: Config) {
  return createRegistry({
    dataDir: config.dataDir,
    migrations: migrationsOf,
    synchronous: synchronousOf,
    maxOpen: 8,
  })
}
