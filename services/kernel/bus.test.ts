import { describe, expect, it } from 'bun:test'
import { createMemoryBus, type EventBus, lazyBus } from './bus.ts'

describe('a bus that connects on first use', () => {
  it('stays unconnected while only reconnection handlers are registered, then hands them over', async () => {
    let connects = 0
    const handed: Array<() => void> = []
    const bus = lazyBus(async (): Promise<EventBus> => {
      connects++
      return { ...createMemoryBus(), onReconnect: (fn) => void handed.push(fn) }
    })
    let called = 0
    bus.onReconnect?.(() => called++)
    // A standby worker's relay registers one: connecting here would take the service's broker
    // session (its stable client id) from the worker that holds it.
    expect(connects).toBe(0)
    expect(bus.connected).toBe(false)
    await bus.publish('t', {
      id: 'evt_1',
      type: 't',
      version: 1,
      tenant_id: 'acme',
      occurred_at: new Date().toISOString(),
      data: {},
    })
    expect(connects).toBe(1)
    for (const fn of handed) fn()
    expect(called).toBe(1)
  })
})
