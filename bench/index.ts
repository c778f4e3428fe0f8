/**
 * `bun run bench`: runs every benchmark under bench/ one after another (or those named).
 * `--smoke` runs each with tiny sizes (bench/support.ts `sized`), as CI does, to prove it still
 * runs to the end; its figures mean nothing.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

const args = process.argv.slice(2)
const smoke = args.includes('--smoke')
const only = args.filter((a) => a !== '--smoke')
const files = readdirSync(import.meta.dir)
  .filter(
    (f) => f.endsWith('.ts') && !['index.ts', 'support.ts'].includes(f) && !f.endsWith('.test.ts'),
  )
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort()
let failed = 0
for (const f of files) {
  console.log(`\n== ${f.replace(/\.ts$/, '')}`)
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, f)], {
    env: { ...process.env, ...(smoke ? { MMP_BENCH_SMOKE: '1' } : {}) },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const code = await proc.exited
  if (code !== 0) {
    failed++
    console.log(`${f}: FAILED (exit ${code})`)
  }
  if (smoke) console.log(`${f}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
}
process.exit(failed ? 1 : 0)
