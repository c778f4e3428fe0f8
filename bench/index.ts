/** `bun run bench`: runs every benchmark under bench/ one after another (or those named). */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const only = process.argv.slice(2)
const files = readdirSync(import.meta.dir)
  .filter(
    (f) => f.endsWith('.ts') && !['index.ts', 'support.ts'].includes(f) && !f.endsWith('.test.ts'),
  )
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort()
let failed = 0
for (const f of files) {
  console.log(`\n== ${f.replace(/\.ts$/, '')}`)
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, f)], {
    stdout: 'inherit',
    stderr: 'inherit',
  })
  if ((await proc.exited) !== 0) failed++
}
process.exit(failed ? 1 : 0)
