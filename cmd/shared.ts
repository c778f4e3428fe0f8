import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError, loadConfig, type Overrides } from '../daemon/config.ts'
import { clientArgs, fail } from './client.ts'

/** Flags every command that reads configuration accepts. */
export const configArgs = {
  config: { type: 'string', description: 'path to mmp.toml' },
  'data-dir': { type: 'string', description: 'data directory (default ./data)' },
} as const

/** `--tenant`: the tenant a command acts for. */
export const tenantArg = {
  tenant: { type: 'string', description: 'tenant id', required: true },
} as const

/** `--role`: the role a user or an API key is given. */
export const roleArg = {
  role: { type: 'string', description: 'Admin | Manager | Analyst | Viewer', default: 'Viewer' },
} as const

/** `--json`: plain JSON on stdout, nothing else there (no banners), for scripts. */
export const jsonArg = {
  json: { type: 'boolean', description: 'print JSON on stdout (nothing else)' },
} as const

/** Prints a command's result as JSON on stdout. */
export const printJson = (value: unknown): void => console.log(JSON.stringify(value, null, 2))

/** Loads config or stops with the one line that names the wrong key. */
export function configFromArgs(
  args: { config?: string; 'data-dir'?: string },
  extra: Overrides = {},
): Config {
  try {
    return loadConfig({ configFile: args.config, dataDir: args['data-dir'], ...extra })
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`error: invalid configuration: ${err.message}\n`)
      process.exit(2)
    }
    throw err
  }
}

/** Stops with one line when the data dir is missing or was never initialised. */
export function requireDataDir(config: Config): void {
  if (!existsSync(config.dataDir))
    fail(`no data dir at ${config.dataDir}: pass --data-dir (or MMP_DATA_DIR), or run \`mmp init\``)
  if (!existsSync(join(config.dataDir, 'secrets.json')))
    fail(`${config.dataDir} is not an mmp data dir (no secrets.json); run \`mmp init\` there first`)
}

/** The flags of a command that acts for one tenant through the running platform. */
export const tenantCommandArgs = {
  ...configArgs,
  ...clientArgs,
  ...tenantArg,
  ...jsonArg,
} as const
