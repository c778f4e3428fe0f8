import { existsSync } from 'node:fs'
import { defineCommand } from 'citty'
import { restoreBackup, verifyBackup } from '../daemon/restore.ts'
import { copyBar } from './backup.ts'
import { fail } from './client.ts'
import { configFromArgs } from './shared.ts'

export default defineCommand({
  meta: {
    name: 'restore',
    description:
      'Restore a backup into a new, empty data dir (verified first); start it with `mmp serve --data-dir NEW`',
  },
  args: {
    from: { type: 'string', description: 'the backup folder', required: true },
    'data-dir': { type: 'string', description: 'the new data dir (must not exist or be empty)' },
    config: { type: 'string', description: 'path to mmp.toml' },
    'enterprise-dir': {
      type: 'string',
      description:
        'put Enterprise databases that lived outside the data dir in DIR/<tenant> (default: the tenant folder in the new data dir)',
    },
    json: { type: 'boolean', description: 'print the report as JSON' },
  },
  async run({ args }) {
    if (!args['data-dir']) fail('restore: --data-dir NEW is required (a new or empty folder)')
    const from = String(args.from)
    if (!existsSync(from)) fail(`restore: no backup at ${from}`)
    const config = configFromArgs(args)
    const check = copyBar('verifying (KB)')
    const verified = await verifyBackup(from, check.update).catch((err: Error) => fail(err.message))
    check.done()
    if (!verified.ok)
      fail(
        `restore: the backup is damaged (${verified.problems[0]}); run \`mmp backup verify ${from}\``,
      )
    const bar = copyBar('restoring (KB)')
    const report = await restoreBackup({
      from,
      dataDir: config.dataDir,
      enterpriseDir: args['enterprise-dir'],
      replayWindowS: config.get<number>('outbox.replay_window_s'),
      onProgress: bar.update,
    }).catch((err: Error) => fail(`restore: ${err.message}`))
    bar.done()
    if (args.json) return console.log(JSON.stringify(report, null, 2))
    for (const r of report.relocated)
      console.error(`${r.tenant}: Enterprise databases from ${r.from} are now in ${r.to}`)
    console.log(
      `restored ${report.files} files into ${report.data_dir} (backup of ${report.started_at}); start it with: mmp serve --data-dir ${report.data_dir}`,
    )
  },
})
