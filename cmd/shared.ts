import { consola } from 'consola'
import { type Config, ConfigError, loadConfig, type Overrides } from '../daemon/config.ts'

/** Flags every command that reads configuration accepts. */
export const configArgs = {
  config: { type: 'string', description: 'path to mmp.toml' },
  'data-dir': { type: 'string', description: 'data directory (default ./data)' },
} as const

/** Loads config or stops with the one line that names the wrong key. */
export function configFromArgs(
  args: { config?: string; 'data-dir'?: string },
  extra: Overrides = {},
): Config {
  try {
    return loadConfig({ configFile: args.config, dataDir: args['data-dir'], ...extra })
  } catch (err) {
    if (err instanceof ConfigError) {
      consola.error(`invalid configuration: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
}
