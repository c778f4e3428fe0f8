import type { FromReadThread } from './read-thread.ts'
import { readFile } from './statement-worker-read.ts'
import { chunkPoster, toWire } from './thread-wire.ts'

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
export type FromWorker = Exclude<FromReadThread, { page: number }>

/**
 * How much the process may grow during a read before this thread collects its garbage, and again
 * after each collection. A reading thread's heap is mostly the rows it has already handed on: the
 * engine lets it grow to about three times what is alive before it collects on its own, which took
 * a 100,000-row org-portal CSV's import past 300 MB. A full collection costs 30-60 ms, so a read
 * that stays small never pays for one.
 */
const COLLECT_EVERY = 160 * 1024 * 1024

declare const self: Worker
const post = (m: FromWorker) => self.postMessage(m)
// A new poster for each read: a kept thread (read-thread.ts) starts every read with full credit.
let chunks = chunkPoster(post)

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data
  if ('ack' in m) return chunks.ack()
  chunks = chunkPoster(post)
  void read({ file: m.file, timeZone: m.timeZone, ids: m.ids, now: m.now, sheet: m.sheet === true })
}

async function read({
  file,
  timeZone,
  ids,
  now,
  sheet,
}: {
  file: Blob
  timeZone: string
  ids: boolean
  now: number | undefined
  sheet: boolean
}): Promise<void> {
  let collectAt = process.memoryUsage.rss() + COLLECT_EVERY
  try {
    const done = await readFile(file, {
      timeZone,
      now,
      sheet,
      onChunk: (chunk) => {
        if (process.memoryUsage.rss() > collectAt) {
          Bun.gc(true)
          collectAt = process.memoryUsage.rss() + COLLECT_EVERY
        }
        return chunks.send(chunk, ids)
      },
    })
    post({ done })
  } catch (err) {
    post({ error: toWire(err) })
  }
  // The thread may be kept for the next read (read-thread.ts): what this one held goes now, not
  // whenever the idle thread's collector would have run.
  Bun.gc(true)
}
