import type { PdfLimits } from './pdf-limits.ts'
import type { FromReadThread } from './read-thread.ts'
import { readStatementPdf } from './statement-pdf.ts'
import { chunkPoster, toWire } from './thread-wire.ts'

/**
 * The thread a statement PDF is read on (pdf-thread.ts starts it and may end it at any moment):
 * pdf.js decrypts, inflates and lays out text here, never on the thread that serves requests. It
 * posts each page's rows packed (chunk-wire.ts), at most AHEAD chunks ahead of the thread that
 * stores them, and an error as its code and words so the other side can rebuild it. A build
 * entry of its own (scripts/build.ts).
 */
export type ToPdfWorker =
  | {
      file: Blob
      timeZone: string
      password?: string
      now?: number
      ids: boolean
      limits: Partial<PdfLimits>
    }
  | { ack: true }

type FromPdfWorker = FromReadThread

declare const self: Worker
const post = (m: FromPdfWorker) => self.postMessage(m)
const chunks = chunkPoster(post)

self.onmessage = (e: MessageEvent<ToPdfWorker>) => {
  const m = e.data
  if ('ack' in m) chunks.ack()
  else void read(m)
}

async function read(m: Exclude<ToPdfWorker, { ack: true }>): Promise<void> {
  try {
    const done = await readStatementPdf(m.file, {
      timeZone: m.timeZone,
      password: m.password,
      now: m.now,
      limits: m.limits,
      onPage: (page, pages) => post({ page, pages }),
      onChunk: (chunk) => chunks.send(chunk, m.ids),
    })
    post({ done })
  } catch (err) {
    post({ error: toWire(err) })
  }
}
