import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { Logger } from '../services/kernel/log.ts'
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

/**
 * Runs `backup.schedule` in this process: each run writes `mmp-backup-<UTC time>` (under a
 * `.partial` name until its manifest is written) and then keeps the newest `backup.keep` complete
 * copies. A failed run is logged and the next one comes at its time; nothing here can stop the
 * platform (DESIGN §15).
 */
export function startBackupSchedule(config: Config, log: Logger, version: string) {
  const text = config.get<string | null>('backup.schedule')
  if (!text) return null
  const schedule = parseSchedule(text)
  const dir = backupDirOf(config)
  const keep = config.get<number>('backup.keep')
  let timer: ReturnType<typeof setTimeout> | null = null
  let running: Promise<void> | null = null
  let stopped = false

  const run = async () => {
    // 20300101T030000123Z: sorts by time, and two runs in one second still differ.
    const name = `${PREFIX}${new Date().toISOString().replace(/[-:.]/g, '')}`
    const partial = join(dir, `${name}.partial`)
    const started = performance.now()
    try {
      mkdirSync(dir, { recursive: true, mode: DIR_MODE })
      // A copy a killed process left half-written is never a backup.
      for (const n of readdirSync(dir))
        if (n.startsWith(PREFIX) && n.endsWith('.partial'))
          rmSync(join(dir, n), { recursive: true, force: true })
      const m = await createBackup({ dataDir: config.dataDir, to: partial, version })
      renameSync(partial, join(dir, name))
      const removed = pruneBackups(dir, keep)
      log.info('backup written', {
        backup: join(dir, name),
        files: m.files.length,
        bytes: m.files.reduce((n, f) => n + f.bytes, 0),
        duration_ms: Math.round(performance.now() - started),
        pruned: removed.length,
      })
    } catch (err) {
      rmSync(partial, { recursive: true, force: true })
      log.warn('backup failed; the next one runs at its time', {
        backup_dir: dir,
        error: (err as Error)?.message,
      })
    }
  }
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
