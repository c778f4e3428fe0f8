import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { Logger } from '../services/kernel/log.ts'
import type { WrittenBackup } from '../services/tenant/settings.ts'
import { processAlive } from '../tenants/process-alive.ts'
import { createBackup, MANIFEST } from './backup.ts'
import type { Config } from './config.ts'
import { DIR_MODE } from './permissions.ts'
import { parseSchedule } from './schedule.ts'

const PREFIX = 'mmp-backup-'

/** The folder scheduled backups go to: `backup.dir`, or `<data dir>-backups` beside the data dir. */
export function backupDirOf(config: Config): string {
  const dir = config.get<string | null>('backup.dir')
  if (dir) return resolve(dir)
  return join(dirname(config.dataDir), `${basename(config.dataDir)}-backups`)
}

/** Partial folders runs of this process are writing now: a cleanup leaves them alone. */
const writing = new Set<string>()
/** Numbers this process's runs, so two started in the same millisecond never share a folder. */
let runs = 0

/** A half-written copy whose process is gone (or of an older name without its pid). */
function abandoned(name: string): boolean {
  const pid = Number(/\.(\d+)\.partial$/.exec(name)?.[1])
  return !writing.has(name) && (!pid || pid === process.pid || !processAlive(pid))
}

/**
 * One backup into the backup folder: `mmp-backup-<UTC time>` (under a `.<run>.<pid>.partial` name until
 * its manifest is written), then the newest `backup.keep` complete copies are kept. Throws when
 * the copy fails (its partial folder removed); the schedule and `POST /api/v1/backups` both run it.
 *
 * @example
 * const run = backupRunner(config, version)
 * const { path, bytes } = await run()
 */
export function backupRunner(config: Config, version: string): () => Promise<WrittenBackup> {
  const dir = backupDirOf(config)
  const keep = config.get<number>('backup.keep')
  const dataDir = config.dataDir
  return async () => {
    // 20300101T030000123Z: sorts by time, and two runs in one second still differ.
    const name = `${PREFIX}${new Date().toISOString().replace(/[-:.]/g, '')}`
    const run = ++runs
    const partialName = `${name}.${run}.${process.pid}.partial`
    const partial = join(dir, partialName)
    const started = performance.now()
    writing.add(partialName)
    try {
      mkdirSync(dir, { recursive: true, mode: DIR_MODE })
      // A copy a killed process left half-written is never a backup; one still being written is.
      for (const n of readdirSync(dir))
        if (n.startsWith(PREFIX) && n.endsWith('.partial') && abandoned(n))
          rmSync(join(dir, n), { recursive: true, force: true })
      const m = await createBackup({ dataDir, to: partial, version })
      const backup = publish(partial, dir, name, run)
      const pruned = pruneBackups(dir, keep)
      return {
        backup,
        path: join(dir, backup),
        bytes: m.files.reduce((n, f) => n + f.bytes, 0),
        files: m.files.length,
        databases: m.files.filter((f) => f.kind === 'database').length,
        started_at: m.started_at,
        finished_at: m.finished_at,
        duration_ms: Math.round(performance.now() - started),
        pruned: pruned.length,
        warnings: m.warnings,
      }
    } catch (err) {
      rmSync(partial, { recursive: true, force: true })
      throw err
    } finally {
      writing.delete(partialName)
    }
  }
}

/**
 * Renames a finished copy to its name, or to `<name>-<pid>-<run>` when another run finished one in
 * the same millisecond (renaming onto a backup fails rather than replace it).
 */
function publish(partial: string, dir: string, name: string, run: number): string {
  const names = [name, `${name}-${process.pid}-${run}`]
  for (const [i, candidate] of names.entries()) {
    try {
      if (existsSync(join(dir, candidate))) continue
      renameSync(partial, join(dir, candidate))
      return candidate
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (i === names.length - 1 || (code !== 'ENOTEMPTY' && code !== 'EEXIST')) throw err
    }
  }
  throw new Error(`${dir} already holds ${names.join(' and ')}`)
}

/**
 * Runs `backup.schedule` in this process with {@link backupRunner}. A failed run is logged and
 * the next one comes at its time; nothing here can stop the platform (DESIGN §15).
 */
export function startBackupSchedule(config: Config, log: Logger, version: string) {
  const text = config.get<string | null>('backup.schedule')
  if (!text) return null
  const schedule = parseSchedule(text)
  const dir = backupDirOf(config)
  const keep = config.get<number>('backup.keep')
  const backup = backupRunner(config, version)
  let timer: ReturnType<typeof setTimeout> | null = null
  let running: Promise<void> | null = null
  let stopped = false

  const run = () =>
    backup().then(
      (b) =>
        log.info('backup written', {
          backup: b.path,
          files: b.files,
          bytes: b.bytes,
          duration_ms: b.duration_ms,
          pruned: b.pruned,
        }),
      (err) =>
        log.warn('backup failed; the next one runs at its time', {
          backup_dir: dir,
          error: (err as Error)?.message,
        }),
    )
  const arm = () => {
    if (stopped) return
    const wait = Math.max(1000, schedule.next(new Date()).getTime() - Date.now())
    // setTimeout holds at most 2^31-1 ms (24.8 days); a longer wait is re-armed on the way.
    const capped = Math.min(wait, 2 ** 31 - 1)
    timer = setTimeout(() => {
      if (capped < wait) return arm()
      running = run().finally(() => {
        running = null
        arm()
      })
    }, capped)
  }
  arm()
  log.info('backups scheduled', { schedule: schedule.text, backup_dir: dir, keep })
  return {
    dir,
    /** Runs a backup now (tests, and a run due while the previous one is still going waits). */
    runNow: () => running ?? run(),
    async stop() {
      stopped = true
      if (timer) clearTimeout(timer)
      await running
    },
  }
}

/** Deletes all but the newest `keep` complete scheduled backups; returns what it deleted. */
export function pruneBackups(dir: string, keep: number): string[] {
  if (!existsSync(dir)) return []
  const names = readdirSync(dir).filter((n) => n.startsWith(PREFIX))
  const complete = names
    .filter((n) => !n.endsWith('.partial') && existsSync(join(dir, n, MANIFEST)))
    .sort()
  const old = complete.slice(0, Math.max(0, complete.length - keep))
  for (const n of old) rmSync(join(dir, n), { recursive: true, force: true })
  return old.map((n) => join(dir, n))
}
