import { describe, expect, it } from 'bun:test'
import { deflateSync } from 'node:zlib'
import { makeStatementPdf } from '../../scripts/make-statement-pdf.ts'
import type { PdfLimits } from './pdf-limits.ts'
import { readStatementPdfOnThread } from './pdf-thread.ts'
import { readStatementPdf } from './statement-pdf.ts'

/**
 * Hostile PDFs, made by hand as bytes: each is refused with a 422 naming its limit, on the
 * reading thread, while the service's own thread keeps serving.
 */
const enc = new TextEncoder()

/** A PDF of these objects (1 is the catalog), with a correct cross-reference table. */
function pdfOf(objects: Array<string | Uint8Array>): Uint8Array {
  const parts: Uint8Array[] = [enc.encode('%PDF-1.7\n')]
  let at = parts[0]!.length
  const offsets: number[] = []
  for (const [i, o] of objects.entries()) {
    offsets.push(at)
    for (const p of [enc.encode(`${i + 1} 0 obj\n`), typeof o === 'string' ? enc.encode(o) : o]) {
      parts.push(p)
      at += p.length
    }
    const end = enc.encode('\nendobj\n')
    parts.push(end)
    at += end.length
  }
  const xref = [
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`,
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`,
  ].join('')
  parts.push(enc.encode(xref))
  return new Uint8Array(Buffer.concat(parts))
}

const stream = (dict: string, data: Uint8Array) =>
  Buffer.concat([
    enc.encode(`<< ${dict} /Length ${data.length} >>\nstream\n`),
    data,
    enc.encode('\nendstream'),
  ])

const CATALOG = '<< /Type /Catalog /Pages 2 0 R >>'

function manyPages(n: number): Uint8Array {
  const kids = Array.from({ length: n }, (_, i) => `${i + 3} 0 R`).join(' ')
  return pdfOf([
    CATALOG,
    `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`,
    ...Array.from({ length: n }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>'),
  ])
}

const pageTreeLoop = () =>
  pdfOf([
    CATALOG,
    '<< /Type /Pages /Kids [3 0 R] /Count 2 >>',
    '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 2 >>',
  ])

const deepNesting = (depth: number) =>
  pdfOf([
    CATALOG,
    `<< /Type /Pages /Kids [3 0 R] /Count 1 /X ${'['.repeat(depth)}${']'.repeat(depth)} >>`,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>',
  ])

/** A page whose content stream inflates from a few hundred kB to `bytes` of spaces. */
const inflateBomb = (bytes: number) =>
  pdfOf([
    CATALOG,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents 4 0 R >>',
    stream('/Filter /FlateDecode', deflateSync(Buffer.alloc(bytes, 32), { level: 9 })),
  ])

const onThread = (
  bytes: Uint8Array,
  limits: Partial<PdfLimits> = {},
  signal?: AbortSignal,
  onPage?: (page: number) => void,
) =>
  readStatementPdfOnThread(new Blob([bytes as Uint8Array<ArrayBuffer>]), {
    timeZone: 'Africa/Nairobi',
    onChunk: () => {},
    limits,
    signal,
    ...(onPage ? { onPage } : {}),
  })

async function refusal(p: Promise<unknown>) {
  try {
    await p
  } catch (err) {
    return err as { code: string; status: number; detail: string; extra?: { limit: string } }
  }
  throw new Error('expected a refusal')
}

/**
 * The worst wait of a 1 ms timer while `work` runs: how long the thread that serves requests
 * was kept from them.
 */
async function worstWait(work: () => Promise<unknown>): Promise<number> {
  let worst = 0
  let running = true
  const ticker = (async () => {
    while (running) {
      const t = performance.now()
      await new Promise((r) => setTimeout(r, 1))
      worst = Math.max(worst, performance.now() - t)
    }
  })()
  await work().catch(() => {})
  running = false
  await ticker
  return worst
}

describe('statement PDF limits', () => {
  it('refuses a PDF of more pages than a statement has, naming the limit', async () => {
    const e = await refusal(onThread(manyPages(2100)))
    expect(e).toMatchObject({ code: 'STATEMENT_TOO_LARGE', status: 422, extra: { limit: 'pages' } })
    expect(e.detail).toContain('2100 pages, more than the 2000')
  })

  it('refuses arrays nested deeper than the limit before pdf.js parses them', async () => {
    const e = await refusal(onThread(deepNesting(5000)))
    expect(e).toMatchObject({ code: 'STATEMENT_TOO_LARGE', extra: { limit: 'nesting' } })
  })

  it('refuses more objects than allowed', async () => {
    const e = await refusal(onThread(manyPages(300), { maxObjects: 100 }))
    expect(e).toMatchObject({ code: 'STATEMENT_TOO_LARGE', extra: { limit: 'objects' } })
  })

  it('refuses a page tree that loops as unreadable', async () => {
    const e = await refusal(onThread(pageTreeLoop()))
    expect(e).toMatchObject({
      code: 'STATEMENT_UNREADABLE',
      status: 422,
      extra: { limit: 'structure' },
    })
  })

  it('ends a read past its deadline, and one whose caller went away', async () => {
    const made = await makeStatementPdf({ pages: 20 })
    const late = await refusal(onThread(made.bytes, { timeoutMs: 50 }))
    expect(late).toMatchObject({ code: 'STATEMENT_TOO_LARGE', extra: { limit: 'time' } })
    expect(late.detail).toContain('longer than 0.05 s')
    // The caller goes away once the read is under way: after its first page, not after a time.
    const gone = new AbortController()
    const t0 = performance.now()
    const aborted = await refusal(
      onThread(made.bytes, {}, gone.signal, () => gone.abort(new Error('client disconnected'))),
    )
    expect((aborted as unknown as Error).message).toBe('client disconnected')
    expect(performance.now() - t0).toBeLessThan(1000)
  })

  it('refuses an inflate bomb by the memory it takes while the service thread keeps serving, where on that thread it stalls', async () => {
    const bomb = inflateBomb(250_000_000)
    let refused: Awaited<ReturnType<typeof refusal>> | undefined
    const threadWait = await worstWait(async () => {
      refused = await refusal(onThread(bomb, { maxMemoryBytes: 64 * 2 ** 20 }))
    })
    expect(refused).toMatchObject({ code: 'STATEMENT_TOO_LARGE', extra: { limit: 'memory' } })
    // Reference: the same file read on the thread that serves requests.
    const sameThreadWait = await worstWait(() =>
      readStatementPdf(new Blob([bomb as Uint8Array<ArrayBuffer>]), {
        timeZone: 'Africa/Nairobi',
        onChunk: () => {},
      }),
    )
    expect(threadWait * 3).toBeLessThan(sameThreadWait)
  }, 60_000)

  it('reads a real-sized statement on its thread with every row and its proof', async () => {
    const made = await makeStatementPdf({ pages: 10, legs: true, password: '1234' })
    let kept = 0
    const read = await readStatementPdfOnThread(new Blob([made.bytes as Uint8Array<ArrayBuffer>]), {
      timeZone: 'Africa/Nairobi',
      password: '1234',
      ids: true,
      onChunk: (c) => {
        kept += c.transactions.length
        expect(c.ids).toHaveLength(c.transactions.length)
      },
    })
    expect(read.counts?.read).toBe(made.rows.length)
    expect(kept).toBe(made.rows.filter((r) => r.status === 'Completed').length)
    expect(read.proof).toMatchObject({ totalsMatch: true, balanceChains: true })
    const wrong = await refusal(
      readStatementPdfOnThread(new Blob([made.bytes as Uint8Array<ArrayBuffer>]), {
        timeZone: 'Africa/Nairobi',
        password: 'nope',
        onChunk: () => {},
      }),
    )
    expect(wrong).toMatchObject({ code: 'STATEMENT_PASSWORD_INCORRECT', status: 422 })
  })
})
