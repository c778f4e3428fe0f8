import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { type ServiceName, serviceNames } from '../services/kernel/context.ts'
import { parseSchedule } from './schedule.ts'
import { idleTimeoutFloorS, type Setting, settings } from './settings.ts'

export const basePorts = {
  gateway: 9000,
  analytics: 8000,
  auth: 8001,
  tenant: 8002,
  parser: 8003,
  cashflow: 8005,
  payment: 8007,
  billing: 8008,
  categorizer: 8009,
  webhook: 8010,
  simulator: 8099,
  broker: 1883,
} as const
export type Part = keyof typeof basePorts
export const parts = Object.keys(basePorts) as Part[]

export class ConfigError extends Error {}

type Values = Record<string, unknown>

export interface Config {
  dataDir: string
  portOffset: number
  host: string
  gatewayHost: string
  ports: Record<Part, number>
  only: readonly Part[]
  discovery: Record<ServiceName, readonly string[]>
  /**
   * Each service's own base URL as its discovery list names it (`instance.<service>` in the file,
   * `MMP_INSTANCE_<SERVICE>`; default: the address it listens on). A service listed with several
   * instances finds its own tenants with it (services/kernel/tenant-owner.ts).
   */
  self: Record<ServiceName, string>
  values: Readonly<Values>
  /** Typed read of one setting by its key, e.g. `get<number>('gateway.timeout_ms')`. */
  get<T>(key: string): T
}

export interface Overrides {
  configFile?: string | undefined
  dataDir?: string | undefined
  only?: string | undefined
  portOffset?: number | undefined
  /** `--workers N` of `mmp serve`. */
  workers?: string | undefined
  env?: Record<string, string | undefined>
}

function parseDuration(text: string, key: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim())
  if (!m) throw new ConfigError(`${key}: '${text}' is not a duration like 500ms, 5s, 5m, 2h`)
  const n = Number(m[1])
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 's']!
  return Math.round(n * unit)
}

function coerce(s: Setting, raw: unknown, origin: string): unknown {
  const where = `${s.key} (${origin})`
  if (raw === null || raw === undefined || raw === '')
    return s.kind.type === 'list' || s.kind.type === 'durations' ? s.default : null
  switch (s.kind.type) {
    case 'string':
      if (typeof raw !== 'string') throw new ConfigError(`${where}: expected a string`)
      return raw
    case 'int': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim())
      if (!Number.isInteger(n) || n < s.kind.min || n > s.kind.max) {
        throw new ConfigError(
          `${where}: '${raw}' is not a whole number from ${s.kind.min} to ${s.kind.max}`,
        )
      }
      return n
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw
      const v = String(raw).toLowerCase()
      if (['1', 'true', 'yes', 'on'].includes(v)) return true
      if (['0', 'false', 'no', 'off'].includes(v)) return false
      throw new ConfigError(`${where}: '${raw}' is not a boolean (true/false/1/0)`)
    }
    case 'enum':
      if (!s.kind.values.includes(String(raw))) {
        throw new ConfigError(`${where}: '${raw}' is not one of ${s.kind.values.join(', ')}`)
      }
      return String(raw)
    case 'url': {
      try {
        const u = new URL(String(raw))
        return u.toString().replace(/\/$/, '')
      } catch {
        throw new ConfigError(`${where}: '${raw}' is not a URL`)
      }
    }
    case 'list':
      return Array.isArray(raw)
        ? raw.map(String)
        : String(raw)
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
    case 'schedule':
      try {
        return parseSchedule(String(raw)).text
      } catch (err) {
        throw new ConfigError(`${where}: ${(err as Error).message}`)
      }
    case 'durations': {
      const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(',')
      if (items.length === 0) throw new ConfigError(`${where}: needs at least one duration`)
      return items.map((x) => parseDuration(x, where))
    }
  }
}

function lookup(obj: Values, dotted: string): unknown {
  let cur: unknown = obj
  for (const part of dotted.split('.')) {
    if (!cur || typeof cur !== 'object') return undefined
    cur = (cur as Values)[part]
  }
  return cur
}

/**
 * Reads configuration once: defaults < `mmp.toml` (or `--config`) < `MMP_*` environment < flags.
 * Throws ConfigError with one line naming the key when a value is wrong. The result is frozen.
 */
export function loadConfig(over: Overrides = {}): Config {
  const env = over.env ?? process.env
  const fileName =
    over.configFile ?? env.MMP_CONFIG ?? (existsSync('mmp.toml') ? 'mmp.toml' : undefined)
  let file: Values = {}
  if (fileName) {
    if (!existsSync(fileName)) throw new ConfigError(`config: the file ${fileName} does not exist`)
    try {
      file = Bun.TOML.parse(readFileSync(fileName, 'utf8')) as Values
    } catch (err) {
      throw new ConfigError(`config: ${fileName} is not valid TOML (${(err as Error).message})`)
    }
  }
  const known = new Set(settings.map((s) => s.key))
  for (const key of flatKeys(file)) {
    if (key.startsWith('instance.') && !(serviceNames as readonly string[]).includes(key.slice(9)))
      throw new ConfigError(`${key} (${fileName}): '${key.slice(9)}' is not a service`)
    if (!known.has(key) && !key.startsWith('discovery.') && !key.startsWith('instance.'))
      throw new ConfigError(`${key} (${fileName}): unknown setting`)
  }
  const values: Values = {}
  for (const s of settings) {
    let v: unknown = s.default
    const fromFile = lookup(file, s.key)
    if (fromFile !== undefined) v = coerce(s, fromFile, fileName ?? 'file')
    const fromEnv = env[s.env]
    if (fromEnv !== undefined && fromEnv !== '') v = coerce(s, fromEnv, s.env)
    values[s.key] = v
  }
  if (over.dataDir) values.data_dir = over.dataDir
  if (over.workers !== undefined)
    values.workers = coerce(settings.find((s) => s.key === 'workers')!, over.workers, '--workers')
  if (over.portOffset !== undefined)
    values.port_offset = coerce(
      settings.find((s) => s.key === 'port_offset')!,
      over.portOffset,
      '--port-offset',
    )

  const dataDir = resolve(String(values.data_dir))
  const offset = Number(values.port_offset)
  const ports = Object.fromEntries(parts.map((p) => [p, basePorts[p] + offset])) as Record<
    Part,
    number
  >
  for (const p of parts) {
    if (ports[p] > 65535)
      throw new ConfigError(`port_offset: ${offset} puts the ${p} port past 65535`)
  }

  // A gateway idle timeout shorter than a request budget would drop a slow request's connection
  // before its 504: refused here, not quietly raised.
  const idle = Number(values['gateway.idle_timeout_s'])
  const floor = idleTimeoutFloorS((key) => values[key])
  if (idle !== 0 && idle < floor)
    throw new ConfigError(
      `gateway.idle_timeout_s: ${idle} is shorter than the longest request budget plus 10 s (${floor}); set at least ${floor}, 0 for that, or lower gateway.timeout_ms / gateway.bulk_timeout_ms`,
    )

  let only: Part[] = [...parts]
  const onlyText = over.only ?? env.MMP_ONLY
  if (onlyText) {
    only = onlyText
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean) as Part[]
    for (const p of only) {
      if (!parts.includes(p))
        throw new ConfigError(`--only: '${p}' is not one of ${parts.join(', ')}`)
    }
  }

  const host = String(values.host)
  const discovery = {} as Record<ServiceName, readonly string[]>
  const self = {} as Record<ServiceName, string>
  for (const name of serviceNames) {
    const fromEnv = env[`MMP_DISCOVERY_${name.toUpperCase()}`]
    const fromFile = lookup(file, `discovery.${name}`)
    const list = fromEnv
      ? fromEnv
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)
      : Array.isArray(fromFile)
        ? fromFile.map(String)
        : [`http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${ports[name]}`]
    for (const url of list)
      coerce(
        {
          key: `discovery.${name}`,
          env: '',
          parts: ['daemon', 'gateway'],
          kind: { type: 'url' },
          default: null,
          help: '',
        },
        url,
        'discovery',
      )
    discovery[name] = Object.freeze(list.map((u) => u.replace(/\/$/, '')))
    const ownUrl =
      env[`MMP_INSTANCE_${name.toUpperCase()}`] ?? lookup(file, `instance.${name}`) ?? undefined
    self[name] =
      ownUrl === undefined || ownUrl === ''
        ? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${ports[name]}`
        : String(
            coerce(
              {
                key: `instance.${name}`,
                env: `MMP_INSTANCE_${name.toUpperCase()}`,
                parts: [name],
                kind: { type: 'url' },
                default: null,
                help: '',
              },
              ownUrl,
              'instance',
            ),
          )
  }

  const config: Config = {
    dataDir,
    portOffset: offset,
    host,
    gatewayHost: String(values['gateway.host']),
    ports,
    only,
    discovery,
    self: Object.freeze(self),
    values: Object.freeze(values),
    get<T>(key: string): T {
      if (!(key in values)) throw new Error(`unknown setting ${key}`)
      return values[key] as T
    },
  }
  return Object.freeze(config)
}

function flatKeys(obj: Values, prefix = ''): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k
    if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...flatKeys(v as Values, key))
    else out.push(key)
  }
  return out
}
