import type { AppError, ErrorCode, FieldError } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { packChunk, type WireChunk } from './chunk-wire.ts'
import type { StatementRead } from './statement-row.ts'
import { readFile } from './statement-worker-read.ts'

/**
 * The thread a CSV statement is parsed on (statement-thread.ts starts it): it streams the file
 * through `streamStatement` and posts each chunk packed (chunk-wire.ts). It reads at most AHEAD
 * chunks ahead of the thread that stores them, which acknowledges each one it has stored, so a
 * large file is never held whole in memory. A build entry of its own (scripts/build.ts).
 */
export type ToWorker =
  | { file: Blob; timeZone: string; ids: boolean; now?: number; sheet?: boolean }
  | { ack: true }
/** An error carries its kernel code and field errors across, so a refusal stays a 422. */
export type FromWorker =
  | { chunk: WireChunk }
  | { done: StatementRead }
  | { error: string; code?: ErrorCode; errors?: FieldError[] }

/** Chunks posted and not yet acknowledged, at most. */
const AHEAD = 4

declare const self: Worker
const post = (m: FromWorker) => self.postMessage(m)
let credit = AHEAD
let waiting: (() => void) | null = null

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data
  if ('ack' in m) {
    credit++
    const go = waiting
    waiting = null
    go?.()
  } else void read(m.file, m.timeZone, m.ids, m.now, m.sheet === true)
}

async function read(
  file: Blob,
  timeZone: string,
  ids: boolean,
  now: number | undefined,
  sheet: boolean,
): Promise<void> {
  try {
    const done = await readFile(file, {
      timeZone,
      now,
      sheet,
      onChunk: async (chunk) => {
        if (credit === 0) await new Promise<void>((resolve) => (waiting = resolve))
        credit--
        // Ids are made here too: 0.3-0.6 µs a row the storing thread then does not spend.
        if (ids) chunk.ids = chunk.transactions.map(() => newId('txn'))
        post({ chunk: packChunk(chunk) })
      },
    })
    post({ done })
  } catch (err) {
    const e = err as Partial<AppError>
    post({
      error: String((err as Error)?.message ?? err),
      ...(e?.code ? { code: e.code } : {}),
      ...(e?.errors ? { errors: e.errors } : {}),
    })
  }
}
