import { describe, expect, it } from 'bun:test'
import { perKeyQueue } from './per-key-queue.ts'

describe('perKeyQueue', () => {
  it('runs one key’s work in order, past a failure, and other keys beside it', async () => {
    const queue = perKeyQueue()
    const seen: string[] = []
    let release = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    const first = queue('a', async () => {
      await held
      seen.push('a1')
    })
    const failing = queue('a', () => {
      seen.push('a2')
      throw new Error('boom')
    })
    const third = queue('a', () => seen.push('a3'))
    // Another key does not wait for a's first run.
    await queue('b', () => seen.push('b1'))
    expect(seen).toEqual(['b1'])
    release()
    await first
    await expect(failing).rejects.toThrow('boom')
    await third
    expect(seen).toEqual(['b1', 'a1', 'a2', 'a3'])
  })
})
