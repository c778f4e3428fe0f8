import { defineCommand } from 'citty'
import { runDoctor } from '../daemon/doctor.ts'
import { configArgs, configFromArgs } from './shared.ts'

const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const

export default defineCommand({
  meta: {
    name: 'doctor',
    description:
      'Check an install: data-dir permissions, keys, free disk, the open-files limit, clock, broker, payment alerts; with --daraja also the configured M-Pesa (Daraja) URL and credentials; exit 1 when something must be fixed',
  },
  args: {
    ...configArgs,
    json: { type: 'boolean', description: 'print the checks as JSON' },
    daraja: {
      type: 'boolean',
      description:
        'also call the configured Daraja base URL with the configured credentials (OAuth, shortcode and passkey, Pull Transactions); nothing is charged',
    },
  },
  async run({ args }) {
    const config = configFromArgs(args)
    const checks = await runDoctor(config, { daraja: !!args.daraja })
    const ok = checks.every((c) => c.status !== 'fail')
    if (args.json) console.log(JSON.stringify({ ok, data_dir: config.dataDir, checks }, null, 2))
    else {
      for (const c of checks) {
        console.log(`${mark[c.status]}  ${c.name}: ${c.detail}`)
        if (c.fix && c.status !== 'ok') console.log(`      fix: ${c.fix}`)
      }
      console.log(ok ? 'nothing to fix' : 'something must be fixed (FAIL above)')
    }
    process.exit(ok ? 0 : 1)
  },
})
