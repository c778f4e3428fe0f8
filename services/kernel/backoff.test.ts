import { describe, expect, it } from 'bun:test'
import { exponentialBackoff, nextWait } from './backoff.ts'

describe('exponentialBackoff', () => {
  it('starts at initialMs and doubles up to maxMs, without jitter', () => {
    const policy = exponentialBackoff({ initialMs: 100, maxMs: 700 })
    const waits: number[] = []
    let step = nextWait(policy, undefined)
    for (let i = 0; i < 5; i++) {
      waits.push(step.duration)
      step = nextWait(policy, step)
    }
    expect(waits).toEqual([100, 200, 400, 700, 700])
  })

  it('starts again from the first wait for a thing with no step', () => {
    const policy = exponentialBackoff({ initialMs: 5, maxMs: 50 })
    nextWait(policy, nextWait(policy, undefined))
    expect(nextWait(policy, undefined).duration).toBe(5)
  })
})
