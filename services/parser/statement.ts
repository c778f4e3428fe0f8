import { Readable } from 'node:stream'
import Papa from 'papaparse'
import { StatementReader } from './statement-reader.ts'
import { newChunk, type StatementChunk, type StatementRead } from './statement-row.ts'

export type { StatementChunk, StatementRead } from './statement-row.ts'

/** papaparse reads Node streams; its typings only admit browser inputs. */
const parseNodeStream = Papa.parse as unknown as (
  input: Readable,
  config: Omit<Papa.ParseConfig<string[]>, 'chunk'> & {
    chunk: (result: Papa.ParseResult<string[]>, parser: Papa.Parser) => void
    error: (err: Error) => void
  },
) => void

/**
 * Streams an M-Pesa statement in CSV (Safaricom's, an org portal's or a converter's) through
 * papaparse and the statement reader, and hands it on in chunks, so a 100,000-row file is never
 * held as rows all at once. `onChunk` is awaited before the parser reads on, so storage keeps
 * pace with parsing.
 */
export async function streamStatement(
  source: ReadableStream<Uint8Array>,
  opts: {
    timeZone: string
    now?: number
    onChunk: (chunk: StatementChunk) => Promise<void> | void
  },
): Promise<StatementRead> {
  const reader = new StatementReader({ timeZone: opts.timeZone, now: opts.now })
  let record = 0

  await new Promise<void>((resolve, reject) => {
    let failed = false
    const fail = (err: unknown) => {
      failed = true
      reject(err)
    }
    parseNodeStream(Readable.fromWeb(source as never), {
      skipEmptyLines: true,
      chunk: (result: Papa.ParseResult<string[]>, parser: Papa.Parser) => {
        const out = newChunk()
        for (const raw of result.data) reader.record(raw, ++record, out)
        parser.pause()
        Promise.resolve(opts.onChunk(out)).then(
          () => parser.resume(),
          (err) => {
            // abort() calls complete(): mark the failure first so nothing more is read.
            fail(err)
            parser.abort()
          },
        )
      },
      complete: () => {
        if (failed) return
        const out = newChunk()
        reader.flush(out)
        Promise.resolve(opts.onChunk(out)).then(() => resolve(), fail)
      },
      error: (err: Error) => fail(err),
    })
  })
  return reader.finish()
}
