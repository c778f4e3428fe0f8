import { Database } from 'bun:sqlite'
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { snapshotDatabase } from './backup-snapshot.ts'
import { DIR_MODE, FILE_MODE, restrictNewFiles } from './permissions.ts'

/**
 * An online copy of a data dir (DESIGN §3 layout) and of every Enterprise tenant's dedicated
 * database folder outside it, taken while the platform serves:
 *
 * ```
 * <backup>/manifest.json          written last: a backup without it is incomplete
 * <backup>/data/...               the data dir: databases, keys, secrets.json, operator.txt,
 *                                 placement and entitlements JSON, simulator state
 * <backup>/external/<tenant>/...  an Enterprise database_path outside the data dir
 * ```
 *
 * Each database is copied with SQLite's `VACUUM INTO` from its own read transaction: a consistent
 * snapshot of that file holding every row committed before the copy started, taken without
 * blocking writers (WAL). Files are 0600 and folders 0700, like the data dir.
 */
export const MANIFEST = 'manifest.json'
export const BACKUP_FORMAT = 1

export interface ManifestFile {
  /** Where it is in the backup, e.g. `data/platform/auth.db`. */
  path: string
  kind: 'database' | 'file'
  bytes: number
  sha256: string
  /** Databases: rows per table in the copy. */
  tables?: Record<string, number>
}

export interface Manifest {
  format: number
  version: string
  /** Every row committed before this time is in the backup. */
  started_at: string
  finished_at: string
  data_dir: string
  files: ManifestFile[]
  /** Enterprise tenants whose database_path lies outside the data dir. */
  external: Array<{ tenant: string; database_path: string; stored_as: string }>
  warnings: string[]
}

export type BackupProgress = (done: number, total: number, file: string) => void

export class BackupError extends Error {}

/** Files in a data dir that are never copied: SQLite's side files, temp files, uploads in flight. */
const skipped = (name: string) =>
  /-(wal|shm|journal)$/.test(name) || name.endsWith('.tmp') || name === 'lost+found'

interface Source {
  abs: string
  path: string
  kind: 'database' | 'file'
}

function walk(root: string, prefix: string, out: Source[], top = true): void {
  if (!existsSync(root)) return
  for (const name of readdirSync(root).sort()) {
    // run/ holds this install's live processes (worker leases, shared rate buckets): a restore
    // that brought them back would wait out a lease held by a process of the old install.
    if (skipped(name) || (top && (name === 'tmp' || name === 'run'))) continue
    const abs = join(root, name)
    const st = lstatSync(abs)
    if (st.isSymbolicLink()) continue
    if (st.isDirectory()) walk(abs, `${prefix}/${name}`, out, false)
    else if (st.isFile())
      out.push({ abs, path: `${prefix}/${name}`, kind: isDatabase(abs) ? 'database' : 'file' })
  }
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1')

function isDatabase(path: string): boolean {
  if (!path.endsWith('.db')) return false
  const head = Buffer.alloc(16)
  const fd = openSync(path, 'r')
  try {
    return readSync(fd, head, 0, 16, 0) === 16 && head.equals(SQLITE_MAGIC)
  } finally {
    closeSync(fd)
  }
}

/** Enterprise tenants whose database folder is outside the data dir, from their placements. */
export function externalFolders(dataDir: string): Array<{ tenant: string; path: string }> {
  const tenants = join(dataDir, 'tenants')
  if (!existsSync(tenants)) return []
  const out: Array<{ tenant: string; path: string }> = []
  for (const tenant of readdirSync(tenants).sort()) {
    const file = join(tenants, tenant, 'placement.json')
    if (!existsSync(file)) continue
    let p: { isolation?: string; database_path?: string }
    try {
      p = JSON.parse(readFileSync(file, 'utf8'))
    } catch {
      continue
    }
    if (p.isolation !== 'database' || !p.database_path || !isAbsolute(p.database_path)) continue
    const rel = relative(resolve(dataDir), p.database_path)
    if (rel.startsWith('..') || isAbsolute(rel)) out.push({ tenant, path: p.database_path })
  }
  return out
}

/**
 * Takes a backup of `dataDir` into `to` (created; must not exist or be empty). Resolves to the
 * manifest, which is written last.
 *
 * @example
 * const m = await createBackup({ dataDir: config.dataDir, to: '/backups/2030-01-01', version })
 */
export async function createBackup(opts: {
  dataDir: string
  to: string
  version: string
  onProgress?: BackupProgress
}): Promise<Manifest> {
  restrictNewFiles()
  const dataDir = resolve(opts.dataDir)
  const to = resolve(opts.to)
  if (!existsSync(join(dataDir, 'secrets.json')))
    throw new BackupError(`${dataDir} is not an mmp data dir (no secrets.json)`)
  if (existsSync(to) && readdirSync(to).length > 0)
    throw new BackupError(`${to} is not empty; back up into a new folder`)
  const inside = relative(dataDir, to)
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)))
    throw new BackupError(`${to} is inside the data dir; back up somewhere else`)
  mkdirSync(to, { recursive: true, mode: DIR_MODE })
  chmodSync(to, DIR_MODE)

  const started = new Date()
  const sources: Source[] = []
  walk(dataDir, 'data', sources)
  const external = externalFolders(dataDir).map((e) => ({
    tenant: e.tenant,
    database_path: e.path,
    stored_as: `external/${e.tenant}`,
  }))
  for (const e of external) walk(e.database_path, e.stored_as, sources, false)
  const warnings: string[] = []
  const total = sources.reduce((n, s) => n + sizeWithWal(s.abs), 0)
  let done = 0
  const files: ManifestFile[] = []
  for (const s of sources) {
    opts.onProgress?.(done, total, s.path)
    const dest = join(to, ...s.path.split('/'))
    ensureDir(to, dirname(dest))
    const size = sizeWithWal(s.abs)
    let tables: Record<string, number> | undefined
    try {
      if (s.kind === 'database') tables = await snapshotDatabase(s.abs, dest)
      else writeFileSync(dest, readFileSync(s.abs), { mode: FILE_MODE })
    } catch (err) {
      // A file erased while we walked (a tenant deleted meanwhile) is no longer data.
      if (!existsSync(s.abs)) {
        warnings.push(`${s.path} was removed during the backup`)
        continue
      }
      throw err
    }
    chmodSync(dest, FILE_MODE)
    const entry: ManifestFile = {
      path: s.path,
      kind: s.kind,
      bytes: statSync(dest).size,
      sha256: await sha256File(dest),
    }
    if (tables) entry.tables = tables
    files.push(entry)
    done += size
    opts.onProgress?.(done, total, s.path)
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    version: opts.version,
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    data_dir: dataDir,
    files,
    external,
    warnings,
  }
  writeFileSync(join(to, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: FILE_MODE })
  chmodSync(join(to, MANIFEST), FILE_MODE)
  return manifest
}

const sizeWithWal = (path: string) => {
  let n = 0
  for (const p of [path, `${path}-wal`]) if (existsSync(p)) n += statSync(p).size
  return n
}

function ensureDir(root: string, dir: string): void {
  if (existsSync(dir)) return
  mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  // mkdir's mode is filtered by the umask; set it on every level made below the root.
  let d = dir
  while (d.startsWith(root + sep)) {
    chmodSync(d, DIR_MODE)
    d = dirname(d)
  }
}

/** Rows per table (SQLite's own tables left out). */
export function countRows(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true })
  try {
    const names = db
      .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as Array<{ name: string }>
    const out: Record<string, number> = {}
    for (const { name } of names.sort((a, b) => a.name.localeCompare(b.name))) {
      const row = db.query(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).get() as {
        n: number
      }
      out[name] = row.n
    }
    return out
  } finally {
    db.close()
  }
}

export async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

export function readManifest(dir: string): Manifest {
  const file = join(dir, MANIFEST)
  if (!existsSync(file))
    throw new BackupError(`${dir} has no ${MANIFEST}: not a backup, or one that did not finish`)
  let m: Manifest
  try {
    m = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    throw new BackupError(`${file} is not valid JSON`)
  }
  if (m.format !== BACKUP_FORMAT || !Array.isArray(m.files))
    throw new BackupError(`${file} is not a backup manifest of format ${BACKUP_FORMAT}`)
  return m
}
