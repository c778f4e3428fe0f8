import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { defineCommand } from 'citty'
import { verifyAuditFile } from '../services/payment/public.ts'
import { createRegistry } from '../tenants/registry.ts'
import { configArgs, configFromArgs, requireDataDir } from './shared.ts'

const verify = defineCommand({
  meta: {
    name: 'verify',
    description:
      'Verify the hash chain of every payment audit trail in the data dir (read-only); exit 1 when broken',
  },
  args: { ...configArgs, json: { type: 'boolean', description: 'print the result as JSON' } },
  run({ args }) {
    const config = configFromArgs(args)
    requireDataDir(config)
    // Only used to list the files; nothing is opened through it.
    const registry = createRegistry({ dataDir: config.dataDir, migrations: () => [] })
    const files = registry.existingTenantDatabases('payment')
    const platformFile = join(config.dataDir, 'platform', 'payment.db')
    if (existsSync(platformFile)) files.unshift(platformFile)
    const results = files.map((f) => verifyAuditFile(f))
    const broken = results.filter((r) => !r.ok)
    if (args.json) {
      console.log(JSON.stringify({ ok: broken.length === 0, files: results }, null, 2))
    } else {
      for (const r of results) {
        if (r.ok) console.log(`ok ${r.path}: ${r.rows} row(s), chain intact`)
        else
          console.log(
            `BROKEN ${r.path}: audit trail broken at row ${r.broken!.seq} (${r.broken!.id}): ${r.broken!.reason}`,
          )
      }
      if (results.length === 0) console.log('no payment databases found')
    }
    process.exit(broken.length ? 1 : 0)
  },
})

export default defineCommand({
  meta: { name: 'audit', description: 'Audit trail tools' },
  subCommands: { verify },
})
