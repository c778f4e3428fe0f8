import { createPublicKey } from 'node:crypto'
import { existsSync, lstatSync, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import mqtt from 'mqtt'
import { serviceNames } from '../services/kernel/context.ts'
import { externalFolders } from './backup.ts'
import type { Config } from './config.ts'
import type { Check } from './doctor-check.ts'
import { darajaChecks, paymentAlertChecks } from './doctor-daraja.ts'
import { databaseCap, openFilesFor, openFilesLimit } from './fd-limit.ts'
import { DIR_MODE, FILE_MODE } from './permissions.ts'

export type { Check } from './doctor-check.ts'

const SECRET_KEYS = ['mqtt_username', 'mqtt_password', 'callback_secret', 'webhook_key', 'hop_key']
const GiB = 1024 ** 3

export interface DoctorOptions {
  /** The open-files limit to judge (default: this process's, from /proc/self/limits). */
  openFiles?: number | null
  /** Free space below this fails the check. */
  minFreeBytes?: number
  now?: Date
  /** Also call the configured Daraja with the configured credentials (`--daraja`). */
  daraja?: boolean
}

export async function runDoctor(config: Config, opts: DoctorOptions = {}): Promise<Check[]> {
  const dataDir = config.dataDir
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory())
    return [
      {
        name: 'data dir',
        status: 'fail',
        detail: `no data dir at ${dataDir}`,
        fix: 'pass --data-dir (or MMP_DATA_DIR), or create it with `mmp init`',
      },
    ]
  const checks: Check[] = [
    permissions(dataDir),
    ...keyFiles(config),
    disk(dataDir, opts.minFreeBytes ?? GiB),
    openFiles(config, opts.openFiles === undefined ? openFilesLimit() : opts.openFiles),
    clock(dataDir, opts.now ?? new Date()),
    await broker(config),
    ...paymentAlertChecks(dataDir),
  ]
  if (opts.daraja) checks.push(...(await darajaChecks(config, opts.now)))
  return checks
}

function permissions(dataDir: string): Check {
  const loose: string[] = []
  let entries = 0
  const visit = (path: string) => {
    const st = lstatSync(path)
    if (st.isSymbolicLink()) return
    entries++
    const want = st.isDirectory() ? DIR_MODE : FILE_MODE
    if ((st.mode & 0o777) !== want) loose.push(`${path} ${(st.mode & 0o777).toString(8)}`)
    if (st.isDirectory()) for (const n of readdirSync(path)) visit(join(path, n))
  }
  visit(dataDir)
  for (const e of externalFolders(dataDir)) if (existsSync(e.path)) visit(e.path)
  if (loose.length === 0)
    return {
      name: 'permissions',
      status: 'ok',
      detail: `${entries} entries, folders 0700 and files 0600`,
    }
  return {
    name: 'permissions',
    status: 'fail',
    detail: `${loose.length} entries readable by others, e.g. ${loose.slice(0, 3).join(', ')}`,
    fix: `run \`mmp init --data-dir ${dataDir}\` (or restart mmp) to set folders 0700 and files 0600`,
  }
}

function keyFiles(config: Config): Check[] {
  const out: Check[] = []
  const priv =
    config.get<string | null>('jwt.private_key_file') ??
    join(config.dataDir, 'keys', 'jwt-private.pem')
  const pub =
    config.get<string | null>('jwt.public_key_file') ??
    join(config.dataDir, 'keys', 'jwt-public.pem')
  const keyProblems: string[] = []
  for (const [label, path] of [
    ['private', priv],
    ['public', pub],
  ] as const) {
    if (!existsSync(path)) keyProblems.push(`the ${label} key ${path} is missing`)
    else {
      try {
        createPublicKey(readFileSync(path, 'utf8'))
      } catch {
        keyProblems.push(`the ${label} key ${path} is not a PEM key`)
      }
    }
  }
  out.push(
    keyProblems.length
      ? {
          name: 'signing keys',
          status: 'fail',
          detail: keyProblems.join('; '),
          fix: 'restore keys/ from a backup (tokens issued with the old key stop working otherwise), or run `mmp init` on a new install',
        }
      : { name: 'signing keys', status: 'ok', detail: `${priv} and ${pub}` },
  )
  const file = join(config.dataDir, 'secrets.json')
  let secrets: Record<string, unknown> | null = null
  try {
    secrets = JSON.parse(readFileSync(file, 'utf8'))
  } catch {}
  const missing = secrets ? SECRET_KEYS.filter((k) => !secrets[k]) : SECRET_KEYS
  out.push(
    !secrets
      ? {
          name: 'secrets',
          status: 'fail',
          detail: `${file} is missing or not JSON`,
          fix: 'restore secrets.json from a backup: it decrypts the webhook signing secrets',
        }
      : missing.length
        ? {
            name: 'secrets',
            status: 'warn',
            detail: `${file} lacks ${missing.join(', ')}`,
            fix: '`mmp serve` adds the missing ones on start',
          }
        : { name: 'secrets', status: 'ok', detail: `${file} holds ${SECRET_KEYS.join(', ')}` },
  )
  const operator = join(config.dataDir, 'operator.txt')
  if (!existsSync(operator) && !config.get<string | null>('operator.password'))
    out.push({
      name: 'operator password',
      status: 'warn',
      detail: `${operator} is missing and MMP_OPERATOR_PASSWORD is not set`,
      fix: 'the admin commands need one of them to log in as the operator',
    })
  return out
}

function disk(dataDir: string, minFree: number): Check {
  const fs = statfsSync(dataDir)
  const free = fs.bavail * fs.bsize
  const share = fs.blocks ? fs.bavail / fs.blocks : 1
  const detail = `${(free / GiB).toFixed(1)} GiB free (${(share * 100).toFixed(0)} %) under ${dataDir}`
  if (free < minFree)
    return {
      name: 'free disk',
      status: 'fail',
      detail,
      fix: `free space on that filesystem: below ${(minFree / GiB).toFixed(1)} GiB writes soon answer 507 STORAGE_FULL`,
    }
  if (share < 0.1)
    return { name: 'free disk', status: 'warn', detail, fix: 'less than 10 % is left' }
  return { name: 'free disk', status: 'ok', detail }
}

/** Databases on this install: each service's platform file plus every tenant database file. */
export function countDatabases(dataDir: string): number {
  let n = 0
  const count = (dir: string) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir)) {
      const full = join(dir, name)
      const st = lstatSync(full)
      if (st.isDirectory()) count(full)
      else if (name.endsWith('.db') && st.isFile()) n++
    }
  }
  count(join(dataDir, 'platform'))
  count(join(dataDir, 'tenants'))
  for (const e of externalFolders(dataDir)) count(resolve(e.path))
  return n
}

function openFiles(config: Config, limit: number | null): Check {
  // A new install has no database yet; every service opens its platform database on first start.
  const databases = Math.max(serviceNames.length, countDatabases(config.dataDir))
  const configured = config.get<number>('registry.max_open')
  const cap = databaseCap(configured, limit)
  const wanted = Math.min(databases, configured)
  // What each process needs to hold every database it may keep open, plus its sockets.
  const need = openFilesFor(wanted)
  const detail = `ulimit -n ${limit ?? 'unlimited'}: room for ${cap} open databases; this install has ${databases} databases (max_open ${configured})`
  if (limit !== null && cap < wanted)
    return {
      name: 'open files',
      status: 'fail',
      detail,
      fix: `raise the open-files limit to at least ${Math.max(1024, need)} (ulimit -n, or LimitNOFILE= in mmp.service)`,
    }
  if (limit !== null && limit < 1024)
    return {
      name: 'open files',
      status: 'warn',
      detail,
      fix: 'every client connection takes a descriptor too: 1024 or more is usual (LimitNOFILE=65536 in mmp.service)',
    }
  return { name: 'open files', status: 'ok', detail }
}

function clock(dataDir: string, now: Date): Check {
  const year = now.getUTCFullYear()
  if (year < 2024 || year > 2100)
    return {
      name: 'clock',
      status: 'fail',
      detail: `the system clock says ${now.toISOString()}`,
      fix: 'set the time (timedatectl set-ntp true): tokens, invoices and payment timestamps depend on it',
    }
  // A data dir written to "in the future" means the clock went back since.
  let newest = 0
  for (const sub of ['platform', 'secrets.json']) {
    const p = join(dataDir, sub)
    if (!existsSync(p)) continue
    const paths = statSync(p).isDirectory() ? readdirSync(p).map((n) => join(p, n)) : [p]
    for (const f of paths) newest = Math.max(newest, statSync(f).mtimeMs)
  }
  if (newest - now.getTime() > 5 * 60_000)
    return {
      name: 'clock',
      status: 'fail',
      detail: `files in the data dir were written at ${new Date(newest).toISOString()}, after now (${now.toISOString()})`,
      fix: 'the clock went back: correct it (NTP) before starting mmp, or token lifetimes and billing periods go wrong',
    }
  return { name: 'clock', status: 'ok', detail: now.toISOString() }
}

async function broker(config: Config): Promise<Check> {
  const external = config.get<string | null>('mqtt.url')
  const url = external ?? `mqtt://127.0.0.1:${config.ports.broker}`
  let stored: Record<string, string> = {}
  try {
    stored = JSON.parse(readFileSync(join(config.dataDir, 'secrets.json'), 'utf8'))
  } catch {}
  const username = config.get<string | null>('mqtt.username') ?? stored.mqtt_username ?? 'mmp'
  const password = config.get<string | null>('mqtt.password') ?? stored.mqtt_password ?? ''
  try {
    const client = await Promise.race([
      mqtt.connectAsync(url, {
        username,
        password,
        connectTimeout: 3000,
        reconnectPeriod: 0,
        clientId: `mmp-doctor-${process.pid}`,
      }),
      Bun.sleep(3500).then(() => {
        throw new Error('no answer in 3 s')
      }),
    ])
    await client.endAsync()
    return { name: 'broker', status: 'ok', detail: `${url} accepts mmp's credentials` }
  } catch (err) {
    const why = (err as Error)?.message ?? String(err)
    if (!external)
      return {
        name: 'broker',
        status: 'warn',
        detail: `the embedded broker at ${url} did not answer (${why})`,
        fix: 'it runs inside `mmp serve`: fine while mmp is stopped',
      }
    return {
      name: 'broker',
      status: 'fail',
      detail: `${url} refused or did not answer (${why})`,
      fix: 'start the broker, or check MMP_MQTT_URL and the mqtt_username / mqtt_password it expects',
    }
  }
}
