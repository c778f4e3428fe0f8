import { defineCommand } from 'citty'
import { version } from '../daemon/version.ts'

export default defineCommand({
  meta: { name: 'version', description: 'Print the mmp version' },
  run() {
    console.log(version)
  },
})
