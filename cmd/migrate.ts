import { defineCommand } from 'citty'
import { consola } from 'consola'
import { serviceModules } from '../daemon/services.ts'
import { openRegistry } from './registry.ts'
import { configArgs, configFromArgs, jsonArg, printJson, requireDataDir } from './shared.ts'

export default defineCommand({
  meta: {
    name: 'migrate',
    description: 'Apply pending migrations to every database in the data dir',
  },
  args: { ...configArgs, ...jsonArg },
  run({ args }) {
    const config = configFromArgs(args)
    requireDataDir(config)
    const registry = openRegistry(config)
    let count = 0
    for (const service of Object.keys(serviceModules)) {
      registry.platform(service)
      count++
      for (const path of registry.existingTenantDatabases(service)) {
        registry.openPath(service, path, null)
        count++
      }
    }
    registry.closeAll()
    if (args.json) return printJson({ databases: count, up_to_date: true })
    consola.success(`${count} database(s) are up to date`)
  },
})
