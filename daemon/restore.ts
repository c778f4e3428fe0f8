import { Database } from 'bun:sqlite'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { and, eq, gt, gte, isNull, lt, or } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { outbox } from '../schema/kernel.ts'
import { tenants } from '../schema/tenant/tables.ts'
import { countRows, readManifest, sha256File } from './backup.ts'
import { DIR_MODE, FILE_MODE, restrictNewFiles, secureTree } from './permissions.ts'

export interface VerifyReport {
  ok: boolean
  dir: string
  started_at: string
  files: number
  databases: number
  rows: number
  problems: string[]
}

/**
 * Checks a backup against its manifest: every file there with its checksum, every database
 * passing `PRAGMA integrity_check` with the row counts recorded when it was taken.
 */
export async function verifyBackup(
  dir: string,
  onProgress?: (done: number, total: number, file: string) => void,
): Promise<VerifyReport> {
  const m = readManifest(dir)
  const problems: string[] = []
  let rows = 0
  let databases = 0
  const total = m.files.reduce((n, f) => n + f.bytes, 0)
  let done = 0
  for (const f of m.files) {
    onProgress?.(done, total, f.path)
    const path = join(dir, ...f.path.split('/'))
    if (!existsSync(path)) {
      problems.push(`${f.path}: missing`)
      continue
    }
    const sha = await sha256File(path)
    if (sha !== f.sha256) problems.push(`${f.path}: checksum differs from the manifest`)
    if (f.kind === 'database') {
      databases++
      const integrity = integrityOf(path)
      if (integrity !== 'ok') problems.push(`${f.path}: integrity_check: ${integrity}`)
      else {
        const counts = countRows(path)
        for (const [table, n] of Object.entries(f.tables ?? {})) {
          if (counts[table] !== n)
            problems.push(`${f.path}: ${table} has ${counts[table] ?? 'no'} rows, manifest ${n}`)
          rows += n
        }
      }
    }
    done += f.bytes
    onProgress?.(done, total, f.path)
  }
  return {
    ok: problems.length === 0,
    dir: resolve(dir),
    started_at: m.started_at,
    files: m.files.length,
    databases,
    rows,
    problems,
  }
}

export function integrityOf(path: string): string {
  let db: Database | null = null
  try {
    db = new Database(path, { readonly: true })
    const out = db.query('PRAGMA integrity_check').all() as Array<{ integrity_check: string }>
    return out.map((r) => r.integrity_check).join('; ')
  } catch (err) {
    return (err as Error).message
  } finally {
    db?.close()
  }
}

export interface RestoreOptions {
  from: string
  dataDir: string
  /** Where Enterprise folders that were outside the data dir go: `<dir>/<tenant>`. Default:
   * `tenants/<tenant>` inside the new data dir. */
  enterpriseDir?: string | undefined
  /**
   * The relay's replay window: events written before the backup began are marked sent this long
   * before it, so the restored platform's start-up replay does not publish them again.
   */
  replayWindowS: number
  onProgress?: (done: number, total: number, file: string) => void
}

export interface RestoreReport {
  data_dir: string
  files: number
  started_at: string
  relocated: Array<{ tenant: string; from: string; to: string }>
  resent_events: number
}

/**
 * Restores a verified backup into a new, empty data dir. Enterprise databases that lived outside
 * the data dir go to `enterpriseDir/<tenant>` or the tenant's own folder, and the tenant's record
 * and placement are pointed there. The outbox up to the backup point is marked sent: the old
 * platform published it, and receivers were notified of it. Only events written while the backup
 * ran (a file copied later holds some that others may lack) are published again; consumers drop
 * the repeats (inbox), and a webhook receiver sees them under the same `webhook-id`.
 */
export async function restoreBackup(opts: RestoreOptions): Promise<RestoreReport> {
  restrictNewFiles()
  const m = readManifest(opts.from)
  const target = resolve(opts.dataDir)
  assertEmpty(target, 'the target data dir')
  const relocated = m.external.map((e) => ({
    tenant: e.tenant,
    from: e.database_path,
    to: opts.enterpriseDir
      ? resolve(opts.enterpriseDir, e.tenant)
      : join(target, 'tenants', e.tenant),
    stored_as: e.stored_as,
  }))
  for (const r of relocated) if (opts.enterpriseDir) assertEmpty(r.to, `${r.tenant}'s folder`)

  mkdirSync(target, { recursive: true, mode: DIR_MODE })
  chmodSync(target, DIR_MODE)
  const total = m.files.reduce((n, f) => n + f.bytes, 0)
  let done = 0
  for (const f of m.files) {
    opts.onProgress?.(done, total, f.path)
    const dest = destinationOf(f.path, target, relocated)
    mkdirSync(dirname(dest), { recursive: true, mode: DIR_MODE })
    writeFileSync(dest, readFileSync(join(opts.from, ...f.path.split('/'))), { mode: FILE_MODE })
    done += f.bytes
    opts.onProgress?.(done, total, f.path)
  }
  for (const r of relocated) relocateTenant(target, r.tenant, r.to, opts.enterpriseDir)
  let resent = 0
  for (const f of m.files) {
    if (f.kind !== 'database' || f.tables?.outbox === undefined) continue
    resent += settleOutbox(
      destinationOf(f.path, target, relocated),
      m.started_at,
      opts.replayWindowS,
    )
  }
  secureTree(target)
  for (const r of relocated) secureTree(r.to)
  return {
    data_dir: target,
    files: m.files.length,
    started_at: m.started_at,
    relocated: relocated.map(({ tenant, from, to }) => ({ tenant, from, to })),
    resent_events: resent,
  }
}

function assertEmpty(path: string, what: string): void {
  if (!existsSync(path)) return
  if (!statSync(path).isDirectory() || readdirSync(path).length > 0)
    throw new Error(`${what} ${path} is not empty; restore into a new folder`)
}

function destinationOf(
  path: string,
  target: string,
  relocated: Array<{ stored_as: string; to: string }>,
): string {
  const parts = path.split('/')
  if (parts[0] === 'data') return join(target, ...parts.slice(1))
  const r = relocated.find((x) => path.startsWith(`${x.stored_as}/`))
  if (!r) throw new Error(`the manifest names ${path}, outside data/ and external/`)
  return join(r.to, path.slice(r.stored_as.length + 1))
}

/** Points the tenant's placement and its tenant record at the folder its databases now are in. */
function relocateTenant(target: string, tenant: string, to: string, absolute?: string): void {
  const databasePath = absolute ? to : `tenants/${tenant}`
  mkdirSync(to, { recursive: true, mode: DIR_MODE })
  const file = join(target, 'tenants', tenant, 'placement.json')
  if (existsSync(file)) {
    const p = JSON.parse(readFileSync(file, 'utf8'))
    writeFileSync(file, JSON.stringify({ ...p, database_path: databasePath }), { mode: FILE_MODE })
  }
  const tenantDb = join(target, 'platform', 'tenant.db')
  if (!existsSync(tenantDb)) return
  const db = new Database(tenantDb)
  try {
    drizzle(db).update(tenants).set({ databasePath }).where(eq(tenants.id, tenant)).run()
  } finally {
    db.close()
  }
}

/**
 * Marks a restored outbox sent up to the backup point, dated before the replay window so the
 * restored platform's start-up replay leaves it alone; what was written after that point goes out
 * again. Returns how many events will be published again.
 */
export function settleOutbox(path: string, backupPoint: string, replayWindowS: number): number {
  const sentAt = new Date(Date.parse(backupPoint) - replayWindowS * 1000 - 1000).toISOString()
  const db = new Database(path)
  try {
    const orm = drizzle(db)
    return db.transaction(() => {
      orm
        .update(outbox)
        .set({ sentAt })
        .where(
          and(
            lt(outbox.createdAt, backupPoint),
            or(isNull(outbox.sentAt), gt(outbox.sentAt, sentAt)),
          ),
        )
        .run()
      return orm
        .update(outbox)
        .set({ sentAt: null })
        .where(gte(outbox.createdAt, backupPoint))
        .returning({ seq: outbox.seq })
        .all().length
    })()
  } finally {
    db.close()
  }
}
