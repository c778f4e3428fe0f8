import { defineCommand } from 'citty'
import { version } from '../daemon/version.ts'
import { jsonArg, printJson } from './shared.ts'

export default defineCommand({
  meta: { name: 'version', description: 'Print the mmp version' },
  args: { ...jsonArg },
  run({ args }) {
    if (args.json) return printJson({ version })
    console.log(version)
  },
})
