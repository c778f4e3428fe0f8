import { describe, expect, it } from 'bun:test'
import { createReadGate, PLATFORM_READS, readSlots } from './read-gate.ts'

const opts = { slots: 2, waiting: 1, waitMs: 5_000, retryAfterS: 7 }

describe('the statement read gate', () => {
  it('lets `slots` reads run, queues `waiting` more and refuses the rest with 503 and Retry-After', async () => {
    const gate = createReadGate(opts)
    const a = await gate.enter()
    await gate.enter()
    const queued = gate.enter()
    expect(gate.load()).toEqual({ running: 2, waiting: 1 })
    const refused = await gate.enter().catch((e) => e)
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '7' } })
    expect(refused.message).toContain('send the same file again in 7 seconds')
    a()
    a() // a second call frees nothing more
    await queued
    expect(gate.load()).toEqual({ running: 2, waiting: 0 })
  })

  it('refuses a read that waited past waitMs, and drops one whose client went away', async () => {
    const gate = createReadGate({ ...opts, slots: 1, waiting: 2, waitMs: 30 })
    const first = await gate.enter()
    await expect(gate.enter()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
    const gone = new AbortController()
    const waiting = gate.enter(gone.signal)
    gone.abort(new Error('client disconnected'))
    await expect(waiting).rejects.toThrow('client disconnected')
    expect(gate.load()).toEqual({ running: 1, waiting: 0 })
    first()
    expect(gate.load()).toEqual({ running: 0, waiting: 0 })
    const again = await gate.enter()
    again()
  })

  it('tells its watcher every change of load and every refusal (what /metrics shows)', async () => {
    const seen: string[] = []
    const gate = createReadGate(
      { ...opts, slots: 1, waiting: 1 },
      { load: (r, w) => seen.push(`${r}+${w}`), refused: () => seen.push('refused') },
    )
    const first = await gate.enter()
    const queued = gate.enter()
    await gate.enter().catch(() => {})
    first()
    ;(await queued)()
    expect(seen).toEqual(['1+0', '1+1', 'refused', '1+0', '0+0'])
  })
})

describe('the share of the platform’s statement reads a process has', () => {
  it('is all of them in one process, and split among `mmp serve` workers, one at least each', () => {
    expect(readSlots(1)).toBe(PLATFORM_READS)
    expect(readSlots(2) * 2).toBe(PLATFORM_READS)
    expect(readSlots(8)).toBe(1)
    expect(readSlots(0)).toBe(PLATFORM_READS)
    expect(readSlots(Number.NaN)).toBe(PLATFORM_READS)
  })
})
