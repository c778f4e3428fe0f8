/**
 * The emailed M-PESA statement PDF: a synthetic 150-page AES-256 encrypted statement (Fuliza
 * groups and charges sharing receipts, Details over several lines) posted as
 * multipart with its password to the parser's route (in-process `app.handle`): decrypted and read
 * page by page with pdf.js on its own thread, rows rebuilt from text positions, deduplicated,
 * stored with their events, until the response. Target < 2 s; meanwhile a 1 ms timer on the
 * service's thread (another tenant's request) keeps its p99 wait ≤ 50 ms.
 * Reference in the same run: the same rows as a statement CSV through the same route.
 * Run: `bun bench/pdf-statement.ts`
 */
import { rmSync } from 'node:fs'
import { migrations } from '../schema/parser/migrations.ts'
import { makeStatementPdf, type StatementRow } from '../scripts/make-statement-pdf.ts'
import { createTestKit } from '../services/kernel/testing.ts'
import { readStatementPdfOnThread } from '../services/parser/pdf-thread.ts'
import { createParserApp } from '../services/parser/routes.ts'

const PAGES = 150
const TARGET_S = 2
const PASSWORD = '31415926'

const made = await makeStatementPdf({ pages: PAGES, password: PASSWORD, legs: true })
const completed = made.rows.filter((r) => r.status === 'Completed').length
console.log(
  `statement: ${made.pages} pages, ${made.rows.length} rows, ${(made.bytes.length / 1e3).toFixed(0)} kB encrypted`,
)

const money = (cents: number) =>
  (cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
const csvOf = (rows: StatementRow[]) =>
  [
    'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance',
    ...rows.map(
      (r) =>
        `${r.receipt},${r.time},"${r.details}",${r.status},${r.paidIn ? `"${money(r.paidIn)}"` : ''},${r.withdrawn ? `"-${money(r.withdrawn)}"` : ''},"${money(r.balance)}"`,
    ),
  ].join('\n')

const kit = await createTestKit('parser', { migrations })
const app = createParserApp(kit.ctx)
async function post(tenantId: string, file: File, fields: Record<string, string> = {}) {
  const form = new FormData()
  form.append('file', file)
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  const request = new Request('http://localhost/api/v1/statements', {
    method: 'POST',
    headers: await kit.authFor({ tenantId, role: 'Admin' }),
    body: form,
  })
  const t0 = performance.now()
  const res = await app.handle(request)
  const body = (await res.json()) as { accepted: number }
  const s = (performance.now() - t0) / 1000
  if (res.status !== 201 || body.accepted !== completed)
    throw new Error(`import failed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`)
  return s
}

// Warm both paths once (module loading, pdf.js's first page), then measure fresh tenants.
await post('warm-csv', new File([csvOf(made.rows)], 'warm.csv'))
const coldS = await post(
  'warm-pdf',
  new File([made.bytes as Uint8Array<ArrayBuffer>], 'warm.pdf'),
  {
    password: PASSWORD,
  },
)

/** Waits of a 1 ms timer on this thread while `work` runs, p99 and worst, in ms. */
async function waits(work: () => Promise<unknown>) {
  const all: number[] = []
  let running = true
  const ticker = (async () => {
    while (running) {
      const t = performance.now()
      await new Promise((r) => setTimeout(r, 1))
      all.push(performance.now() - t)
    }
  })()
  await work()
  running = false
  await ticker
  all.sort((a, b) => a - b)
  return { p99: all[Math.floor(all.length * 0.99)] ?? 0, worst: all.at(-1) ?? 0 }
}

const csvS = await post('bench-csv', new File([csvOf(made.rows)], 'bench.csv'))
const idle = await waits(() => Bun.sleep(500))
const rssBefore = process.memoryUsage().rss
let pdfS = 0
const during = await waits(async () => {
  pdfS = await post('bench-pdf', new File([made.bytes as Uint8Array<ArrayBuffer>], 'bench.pdf'), {
    password: PASSWORD,
  })
})
const rssGrowth = (process.memoryUsage().rss - rssBefore) / 1e6

const t0 = performance.now()
let read = 0
await readStatementPdfOnThread(new Blob([made.bytes as Uint8Array<ArrayBuffer>]), {
  timeZone: 'Africa/Nairobi',
  password: PASSWORD,
  onChunk: (c) => {
    read += c.transactions.length
  },
})
const readS = (performance.now() - t0) / 1000
kit.cleanup()
rmSync(kit.dataDir, { recursive: true, force: true })

console.log(
  `reference  the same ${made.rows.length} rows as a statement CSV through the route: ${csvS.toFixed(2)} s`,
)
console.log(
  `statement PDF import end to end (to response): ${pdfS.toFixed(2)} s (${((pdfS / PAGES) * 1000).toFixed(0)} ms/page), ${(pdfS / csvS).toFixed(1)}× the CSV; rss growth ${rssGrowth.toFixed(0)} MB`,
)
console.log(`  the first PDF after start (pdf.js loads): ${coldS.toFixed(2)} s`)
console.log(
  `  this thread's 1 ms timer meanwhile: p99 ${during.p99.toFixed(1)} ms, worst ${during.worst.toFixed(1)} ms (idle reference p99 ${idle.p99.toFixed(1)} ms); target p99 ≤ 50 ms: ${during.p99 <= 50 ? 'met' : 'MISSED'}`,
)
console.log(
  `  of which reading the PDF on its thread (decrypt, text, rows; ${read} rows): ${readS.toFixed(2)} s`,
)
console.log(
  `target < ${TARGET_S} s: ${pdfS < TARGET_S ? 'met' : 'MISSED'} (ratio to target ${(TARGET_S / pdfS).toFixed(2)}×)`,
)
