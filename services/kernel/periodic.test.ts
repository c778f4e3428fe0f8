import { describe, expect, it } from 'bun:test'
import { startPeriodic } from './periodic.ts'
import { eventually } from './testing.ts'

describe('startPeriodic', () => {
  it('runs a synchronous job once before it returns, then every interval', async () => {
    let runs = 0
    const job = startPeriodic({
      everyMs: 5,
      backoff: { initialMs: 1, maxMs: 5 },
      run: () => runs++,
      onFailure: () => {},
    })
    expect(runs).toBe(1)
    await eventually(() => runs >= 3, 2000, 'three passes')
    await job.stop()
    const after = runs
    await Bun.sleep(30)
    expect(runs).toBe(after)
  })

  it('backs off 2x from the first delay up to the cap while failing, and resets after a success', async () => {
    const told: { failures: number; retryMs: number }[] = []
    let runs = 0
    const job = startPeriodic({
      everyMs: 40,
      backoff: { initialMs: 1, maxMs: 4 },
      run: () => {
        runs++
        if (runs <= 4 || runs === 6) throw new Error(`pass ${runs}`)
      },
      onFailure: (_err, next) => told.push(next),
    })
    await eventually(() => told.length >= 5, 2000, 'a failure after a success')
    await job.stop()
    expect(told).toEqual([
      { failures: 1, retryMs: 1 },
      { failures: 2, retryMs: 2 },
      { failures: 3, retryMs: 4 },
      { failures: 4, retryMs: 4 },
      { failures: 1, retryMs: 1 },
    ])
  })

  it('waits for an asynchronous pass on stop and never overlaps two passes', async () => {
    let active = 0
    let most = 0
    let finished = 0
    const job = startPeriodic({
      everyMs: 1,
      backoff: { initialMs: 1, maxMs: 1 },
      run: async () => {
        active++
        most = Math.max(most, active)
        await Bun.sleep(10)
        active--
        finished++
      },
      onFailure: () => {},
    })
    await eventually(() => finished >= 2, 2000, 'two passes')
    await job.stop()
    expect(active).toBe(0)
    expect(most).toBe(1)
  })

  it('runs once when the interval is 0, and waits firstInMs before a delayed first pass', async () => {
    let once = 0
    const single = startPeriodic({
      everyMs: 0,
      backoff: { initialMs: 1, maxMs: 1 },
      run: () => once++,
      onFailure: () => {},
    })
    let delayed = 0
    const later = startPeriodic({
      everyMs: 1000,
      firstInMs: 5,
      backoff: { initialMs: 1, maxMs: 1 },
      run: () => delayed++,
      onFailure: () => {},
    })
    expect(delayed).toBe(0)
    await eventually(() => delayed === 1, 2000, 'the delayed first pass')
    expect(once).toBe(1)
    await Promise.all([single.stop(), later.stop()])
  })
})
