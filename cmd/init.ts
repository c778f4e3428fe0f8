import { defineCommand } from 'citty'
import { consola } from 'consola'
import { initDataDir } from '../daemon/secrets.ts'
import { configArgs, configFromArgs, jsonArg, printJson } from './shared.ts'

export default defineCommand({
  meta: { name: 'init', description: 'Create the data dir with its keys and secrets (mode 0600)' },
  args: { ...configArgs, ...jsonArg },
  async run({ args }) {
    const config = configFromArgs(args)
    const created = await initDataDir(config)
    if (args.json) return printJson({ data_dir: config.dataDir, created })
    if (created.length === 0) consola.info(`${config.dataDir} is already initialised`)
    for (const f of created) consola.success(`created ${f}`)
  },
})
