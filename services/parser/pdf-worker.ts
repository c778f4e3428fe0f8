import { newId } from '../kernel/ids.ts'
import { packChunk, type WireChunk } from './chunk-wire.ts'
import type { PdfLimits } from './pdf-limits.ts'
import { readStatementPdf } from './statement-pdf.ts'
import type { StatementRead } from './statement-row.ts'

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

export interface WireError {
  message: string
  code?: string
  errors?: Array<{ field: string; message: string }>
  extra?: Record<string, unknown>
}

export type FromPdfWorker =
  | { chunk: WireChunk }
  | { page: number; pages: number }
  | { done: StatementRead }
  | { error: WireError }

const AHEAD = 4

declare const self: Worker
const post = (m: FromPdfWorker) => self.postMessage(m)
let credit = AHEAD
let waiting: (() => void) | null = null

self.onmessage = (e: MessageEvent<ToPdfWorker>) => {
  const m = e.data
  if ('ack' in m) {
    credit++
    const go = waiting
    waiting = null
    go?.()
  } else void read(m)
}

async function read(m: Exclude<ToPdfWorker, { ack: true }>): Promise<void> {
  try {
    const done = await readStatementPdf(m.file, {
      timeZone: m.timeZone,
      password: m.password,
      now: m.now,
      limits: m.limits,
      onPage: (page, pages) => post({ page, pages }),
      onChunk: async (chunk) => {
        if (credit === 0) await new Promise<void>((resolve) => (waiting = resolve))
        credit--
        if (m.ids) chunk.ids = chunk.transactions.map(() => newId('txn'))
        post({ chunk: packChunk(chunk) })
      },
    })
    post({ done })
  } catch (err) {
    const e = err as { message?: string; code?: string; errors?: unknown; extra?: unknown }
    post({
      error: {
        message: String(e?.message ?? err),
        ...(typeof e?.code === 'string' ? { code: e.code } : {}),
        ...(Array.isArray(e?.errors) ? { errors: e.errors as WireError['errors'] } : {}),
        ...(e?.extra && typeof e.extra === 'object'
          ? { extra: e.extra as Record<string, unknown> }
          : {}),
      },
    })
  }
}
