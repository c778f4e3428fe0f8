import { describe, expect, it } from 'bun:test'
import { createMemoryBus, type EventBus } from './bus.ts'
import { lazyBus } from './lazy-bus.ts'

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

describe('a standby worker’s bus with a publisher of its own', () => {
  const event = (id: string) => ({
    id,
    type: 't',
    version: 1,
    tenant_id: 'acme',
    occurred_at: new Date().toISOString(),
    data: {},
  })
  it('publishes through the publisher until ready, never taking the session, then through the session', async () => {
    const session = createMemoryBus()
    const aside = createMemoryBus()
    const seen: Array<[string, string]> = []
    await session.subscribe('t', async (e) => void seen.push(['session', e.id]))
    await aside.subscribe('t', async (e) => void seen.push(['aside', e.id]))
    let connects = 0
    let publishers = 0
    const bus = lazyBus(
      async () => {
        connects++
        return session
      },
      {
        publisher: async () => {
          publishers++
          return aside
        },
      },
    )
    expect(bus.publishesAside?.()).toBe(true)
    await bus.publish('t', event('evt_1'))
    await bus.publish('t', event('evt_2'))
    // A connection with the service's client id would take the holder's session and its queue.
    expect(connects).toBe(0)
    expect(publishers).toBe(1)
    await bus.ready?.()
    expect(bus.publishesAside?.()).toBe(false)
    await bus.publish('t', event('evt_3'))
    expect(seen).toEqual([
      ['aside', 'evt_1'],
      ['aside', 'evt_2'],
      ['session', 'evt_3'],
    ])
  })
})
