import { AppError, type ErrorCode, type FieldError } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { packChunk, type WireChunk } from './chunk-wire.ts'
import type { StatementChunk } from './statement-row.ts'

/**
 * What the statement reading threads (statement-worker.ts for CSV and spreadsheets, pdf-worker.ts
 * for PDFs) and the threads that start them share: chunks posted at most AHEAD ahead of the
 * storing side's acknowledgements, and errors sent as their code and words so the other side
 * rebuilds the same kernel error (a refusal stays a 422, not a 500).
 */
export interface WireError {
  message: string
  code?: string
  errors?: FieldError[]
  extra?: Record<string, unknown>
}

/** Chunks posted and not yet acknowledged, at most. */
const AHEAD = 4

/**
 * The posting side of a reading thread: `send` waits for credit, then posts the chunk packed;
 * `ack` is called for each acknowledgement the storing side sends back.
 */
export function chunkPoster(post: (m: { chunk: WireChunk }) => void) {
  let credit = AHEAD
  let waiting: (() => void) | null = null
  return {
    ack() {
      credit++
      const go = waiting
      waiting = null
      go?.()
    },
    async send(chunk: StatementChunk, ids: boolean): Promise<void> {
      if (credit === 0) await new Promise<void>((resolve) => (waiting = resolve))
      credit--
      // Ids are made on the reading thread: 0.3-0.6 µs a row the storing thread then does not spend.
      if (ids) chunk.ids = chunk.transactions.map(() => newId('txn'))
      post({ chunk: packChunk(chunk) })
    },
  }
}

/** An error as it crosses between threads. */
export function toWire(err: unknown): WireError {
  const e = err as { message?: string; code?: string; errors?: unknown; extra?: unknown }
  return {
    message: String(e?.message ?? err),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(Array.isArray(e?.errors) ? { errors: e.errors as FieldError[] } : {}),
    ...(e?.extra && typeof e.extra === 'object'
      ? { extra: e.extra as Record<string, unknown> }
      : {}),
  }
}

/** The error `toWire` sent: a kernel error with its code, or a plain one. */
export function fromWire(e: WireError): Error {
  if (!e.code) return new Error(e.message)
  return new AppError(e.code as ErrorCode, e.message, {
    ...(e.errors ? { errors: e.errors } : {}),
    ...(e.extra ? { extra: e.extra } : {}),
  })
}
