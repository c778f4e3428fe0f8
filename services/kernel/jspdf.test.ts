import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'

const root = join(import.meta.dir, '..', '..')
const lazyModule = join(import.meta.dir, 'jspdf.ts')

/** What a fresh process has loaded after importing `modules`, then after making one PDF. */
function probe(modules: string[]): { atStart: boolean; afterPdf: boolean; pdf: string } {
  const script = `
    const loaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/jspdf/'))
    for (const m of ${JSON.stringify(modules)}) await import(m)
    const atStart = loaded()
    const { jsPDF } = await import(${JSON.stringify(lazyModule)})
    const doc = new jsPDF({ unit: 'mm', format: 'a4' })
    doc.text('hello', 10, 10)
    const pdf = Buffer.from(doc.output('arraybuffer')).subarray(0, 5).toString('latin1')
    console.log(JSON.stringify({ atStart, afterPdf: loaded(), pdf }))
  `
  const r = Bun.spawnSync([process.execPath, '-e', script], { cwd: root })
  if (r.exitCode !== 0) throw new Error(r.stderr.toString())
  return JSON.parse(r.stdout.toString())
}

describe('jspdf on first use', () => {
  it('is not loaded by starting the services that make PDFs, and is once a PDF is made', () => {
    const r = probe(['./services/billing/index.ts', './services/analytics/index.ts'])
    expect(r).toEqual({ atStart: false, afterPdf: true, pdf: '%PDF-' })
  })

  it('acts as the library class: static members and instances', async () => {
    const { jsPDF } = await import('./jspdf.ts')
    const doc = new jsPDF({ unit: 'pt', format: 'a4' })
    expect(doc.internal.pageSize.getWidth()).toBeCloseTo(595.28, 1)
    expect(typeof jsPDF.API).toBe('object')
  })
})
