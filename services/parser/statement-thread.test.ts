import { describe, expect, it } from 'bun:test'
import { eventually } from '../kernel/testing.ts'
import { streamStatement } from './statement.ts'
import type { StatementChunk } from './statement-row.ts'
import { streamStatementOnThread } from './statement-thread.ts'
import type { FromWorker, ToWorker } from './statement-worker.ts'

const HEADER = 'Receipt No.,Completion Time,Details,Transaction Status,Paid In,Withdrawn,Balance'
/** Large enough to be read in many chunks. */
const csv = [
  'M-PESA STATEMENT',
  HEADER,
  ...Array.from({ length: 20_000 }, (_, i) =>
    i % 997 === 5
      ? `BAD${i},2024-01-05 08:00:00,"Funds received",Completed,"x",,`
      : `RCP${String(i).padStart(7, '0')},2024-01-05 08:${String(i % 60).padStart(2, '0')}:00,"Funds received from 0712345678 - JOHN ${i}",${i % 500 === 7 ? 'Failed' : 'Completed'},"${i}.50",,"1,${String(i % 1000).padStart(3, '0')}.00"`,
  ),
].join('\n')
const timeZone = 'Africa/Nairobi'

describe('a CSV statement read on a thread of its own', () => {
  it('hands on, in order, what reading it on this thread hands on', async () => {
    const here: StatementChunk[] = []
    const hereRead = await streamStatement(new Blob([csv]).stream(), {
      timeZone,
      onChunk: (c) => void here.push(c),
    })
    const there: StatementChunk[] = []
    const thereRead = await streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: (c) => void there.push(c),
    })
    expect(there.length).toBeGreaterThan(1)
    expect(thereRead).toEqual(hereRead)
    const all = (chunks: StatementChunk[]) => ({
      transactions: chunks.flatMap((c) => c.transactions),
      rows: chunks.flatMap((c) => c.rows),
      errors: chunks.flatMap((c) => c.errors),
      skipped: chunks.reduce((n, c) => n + c.skipped, 0),
    })
    expect(all(there)).toEqual(all(here))
    expect(all(there).errors.length).toBeGreaterThan(0)
    expect(all(there).skipped).toBeGreaterThan(0)
  })

  it("makes the rows' transaction ids when asked, and only then", async () => {
    const ids: string[] = []
    let without = 0
    await streamStatementOnThread(new Blob([csv]), {
      timeZone,
      ids: true,
      onChunk: (c) => void ids.push(...c.ids!),
    })
    await streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: (c) => {
        if (c.ids) without++
      },
    })
    expect(ids.length).toBe(20_000 - 21 - 40)
    expect(ids.every((id) => /^txn_[0-9a-f]{32}$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(without).toBe(0)
  })

  it('hands chunks on one at a time, each after the one before is done', async () => {
    let inside = 0
    let most = 0
    let chunks = 0
    await streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: async () => {
        most = Math.max(most, ++inside)
        await Bun.sleep(1)
        inside--
        chunks++
      },
    })
    expect(chunks).toBeGreaterThan(1)
    expect(most).toBe(1)
  })

  it('reads no more than 4 chunks ahead of the ones acknowledged', async () => {
    const worker = new Worker(new URL('./statement-worker.ts', import.meta.url))
    const got: FromWorker[] = []
    worker.onmessage = (e: MessageEvent<FromWorker>) => void got.push(e.data)
    const send = (m: ToWorker) => worker.postMessage(m)
    try {
      send({ file: new Blob([csv]), timeZone, ids: false })
      await eventually(() => got.length >= 4, 10_000, 'four chunks')
      expect(got.length).toBe(4)
      for (let acked = 1; acked <= 2; acked++) {
        send({ ack: true })
        await eventually(() => got.length >= 4 + acked, 10_000, 'the next chunk')
        expect(got.length).toBe(4 + acked)
      }
      expect(got.every((m) => 'chunk' in m)).toBe(true)
    } finally {
      worker.terminate()
    }
  })

  it('fails with the error of a chunk that failed and hands nothing on after it', async () => {
    let calls = 0
    const read = streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: () => {
        if (++calls === 2) throw new Error('disk I/O error')
      },
    })
    await expect(read).rejects.toThrow('disk I/O error')
    expect(calls).toBe(2)
  })

  it('reads on this thread when the worker cannot start (a binary built without its entry)', async () => {
    const here: StatementChunk[] = []
    const read = await streamStatementOnThread(
      new Blob([csv]),
      { timeZone, onChunk: (c) => void here.push(c) },
      './no-such-statement-worker.ts',
    )
    expect(read).toMatchObject({ headerFound: true, rows: 20_000 })
    expect(here.flatMap((c) => c.rows)).toHaveLength(20_000 - 21 - 40)
  })

  it('fails, not waits, when its thread ends midway', async () => {
    // One empty chunk, then the thread is gone.
    const chunk = { fields: null, numbers: null, count: 0, withIds: false, errors: [], skipped: 0 }
    const exits = URL.createObjectURL(
      new Blob([
        `self.onmessage = () => { postMessage({ chunk: ${JSON.stringify(chunk)} }); process.exit(0) }`,
      ]),
    )
    const read = streamStatementOnThread(new Blob([csv]), { timeZone, onChunk: () => {} }, exits)
    await expect(read).rejects.toThrow('the statement reading thread stopped')
  })

  it('finds no header in a file that has none', async () => {
    const read = await streamStatementOnThread(new Blob(['a,b,c\n1,2,3']), {
      timeZone,
      onChunk: () => {},
    })
    expect(read).toMatchObject({ headerFound: false, rows: 0, found: 'a, b, c' })
  })

  it('ends a read that grows the process past its memory bound with a 422 naming the limit', async () => {
    // Each chunk is slow to store and grows the process, so the read outlasts a memory check
    // (every 50 ms) and the process has grown when it comes, on a warm kept thread as on a cold one.
    const held: Uint8Array[] = []
    const read = streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: async () => {
        held.push(new Uint8Array(8 * 2 ** 20).fill(1))
        await Bun.sleep(120)
      },
      bounds: { maxMemoryBytes: 1 },
    })
    await expect(read).rejects.toMatchObject({
      code: 'STATEMENT_TOO_LARGE',
      extra: { limit: 'memory' },
    })
  })

  it('ends a read that runs past its time with a 422 naming the limit', async () => {
    const read = streamStatementOnThread(new Blob([csv]), {
      timeZone,
      // One chunk alone outlasts the bound, however fast a warm thread reads.
      onChunk: () => Bun.sleep(150),
      bounds: { timeoutMs: 30 },
    })
    await expect(read).rejects.toMatchObject({
      code: 'STATEMENT_TOO_LARGE',
      extra: { limit: 'time' },
    })
  })

  it('reads again on a kept thread as on a new one, and never keeps one whose read failed', async () => {
    const rowsOf = async () => {
      let n = 0
      await streamStatementOnThread(new Blob([csv]), {
        timeZone,
        onChunk: (c) => {
          n += c.rows.length
        },
      })
      return n
    }
    const first = await rowsOf()
    expect(await rowsOf()).toBe(first)
    const failed = await streamStatementOnThread(new Blob([csv]), {
      timeZone,
      onChunk: () => {
        throw new Error('disk I/O error')
      },
    }).then(
      () => null,
      (e: Error) => e.message,
    )
    expect(failed).toBe('disk I/O error')
    expect(await rowsOf()).toBe(first)
    expect(await rowsOf()).toBe(first)
  })
})
