import { defineCommand } from 'citty'
import { createBackup } from '../daemon/backup.ts'
import { verifyBackup } from '../daemon/restore.ts'
import { version } from '../daemon/version.ts'
import type { BackupWritten } from '../services/tenant/public.ts'
import { clientArgs, fail, operatorApi } from './client.ts'
import { progressBar } from './import.ts'
import { followJob, type JobOut, RESPOND_ASYNC } from './jobs.ts'
import { configArgs, configFromArgs, requireDataDir } from './shared.ts'

const MB = 1024 * 1024
const mb = (n: number) => `${(n / MB).toFixed(1)} MB`

/** A byte-counting progress bar for copies (the import bar counts rows). */
export function copyBar(label: string) {
  let bar: ReturnType<typeof progressBar> | null = null
  return {
    update(done: number, total: number, file: string) {
      bar ??= progressBar(label, Math.max(1, Math.round(total / 1024)))
      bar.update(Math.round(done / 1024), file)
    },
    done: () => bar?.done(),
  }
}

const verify = defineCommand({
  meta: {
    name: 'verify',
    description:
      'Check a backup: checksums, PRAGMA integrity_check of every database, row counts; exit 1 when anything is off',
  },
  args: {
    dir: { type: 'positional', description: 'the backup folder', required: true },
    json: { type: 'boolean', description: 'print the report as JSON' },
  },
  async run({ args }) {
    const bar = copyBar('verifying (KB)')
    const report = await verifyBackup(String(args.dir), bar.update).catch((err: Error) =>
      fail(err.message),
    )
    bar.done()
    if (args.json) console.log(JSON.stringify(report, null, 2))
    else {
      for (const p of report.problems) console.log(`BROKEN ${p}`)
      console.log(
        `${report.ok ? 'ok' : 'BROKEN'} ${report.dir}: ${report.files} files, ${report.databases} databases, ${report.rows} rows, taken ${report.started_at}`,
      )
    }
    process.exit(report.ok ? 0 : 1)
  },
})

export default defineCommand({
  meta: {
    name: 'backup',
    description:
      'Copy the data dir and every Enterprise database path while the platform runs: --to DIR from this process, else the running platform writes one into its backup.dir (`backup verify DIR` checks one)',
  },
  args: {
    ...configArgs,
    ...clientArgs,
    to: {
      type: 'string',
      description: 'copy from this process into a new or empty folder (works offline)',
    },
    json: { type: 'boolean', description: 'print the manifest summary as JSON' },
  },
  subCommands: { verify },
  async run({ args }) {
    // citty runs this after a subcommand too.
    if (args._[0] === 'verify') return
    if (args.to && args.url)
      fail(
        'backup: --to copies from this process; --url asks the platform to write into its backup.dir. Pass one of them',
      )
    const config = configFromArgs(args)
    if (!args.to) return backupThroughPlatform(config, args)
    requireDataDir(config)
    const bar = copyBar('backup (KB)')
    const m = await createBackup({
      dataDir: config.dataDir,
      to: String(args.to),
      version,
      onProgress: bar.update,
    }).catch((err: Error) => fail(err.message))
    bar.done()
    const bytes = m.files.reduce((n, f) => n + f.bytes, 0)
    const databases = m.files.filter((f) => f.kind === 'database').length
    const summary = {
      backup: String(args.to),
      started_at: m.started_at,
      finished_at: m.finished_at,
      files: m.files.length,
      databases,
      bytes,
      external: m.external,
      warnings: m.warnings,
    }
    if (args.json) return console.log(JSON.stringify(summary, null, 2))
    for (const w of m.warnings) console.error(`warning: ${w}`)
    console.log(
      `backup ${args.to}: ${m.files.length} files (${databases} databases, ${mb(bytes)}), every row committed before ${m.started_at}`,
    )
  },
})

/**
 * Without `--to`: the running platform takes the backup (`POST /api/v1/backups`) into its
 * configured backup.dir, and the command follows the job to the end.
 */
async function backupThroughPlatform(
  config: ReturnType<typeof configFromArgs>,
  args: { url?: string; json?: boolean },
) {
  const client = await operatorApi(config, args.url, 'pass --to DIR to copy from this process')
  const answer = await client.call<BackupWritten | JobOut>(
    'POST',
    '/api/v1/backups',
    {},
    RESPOND_ASYNC,
  )
  const b = await followJob(client, answer, {
    path: (job) => `/api/v1/tenants/platform/jobs/${job}`,
    label: 'backup',
    interrupted: 'run `mmp backup` again',
  })
  if (args.json) return console.log(JSON.stringify(b, null, 2))
  for (const w of b.warnings) console.error(`warning: ${w}`)
  console.log(
    `backup ${b.path}: ${b.files} files (${b.databases} databases, ${mb(b.bytes)}), every row committed before ${b.started_at}`,
  )
}
