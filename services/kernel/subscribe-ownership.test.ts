import { describe, expect, it } from 'bun:test'
import { topics } from '../../schema/events.ts'
import { createMemoryBus } from './bus.ts'
import type { Logger } from './log.ts'
import { eventsElsewhere, subscribe } from './subscribe.ts'
import { createOwnership, ownerOf } from './tenant-owner.ts'

const log = { warn() {}, info() {} } as unknown as Logger
const usage = (id: string, tenant: string) => ({
  id,
  type: topics.usage,
  version: 1,
  tenant_id: tenant,
  occurred_at: '2026-01-01T00:00:00Z',
  data: { metric: 'payments', quantity: 1 },
})

describe('subscribe on one of several instances', () => {
  it('applies the events of its own tenants and leaves the others to their owner', async () => {
    const list = ['http://10.0.0.2:8000', 'http://10.0.0.3:8000']
    const tenants = Array.from({ length: 20 }, (_, i) => `shop-${i}`)
    const applied = new Map<string, string[]>()
    const buses = list.map(() => createMemoryBus())
    for (const [i, self] of list.entries()) {
      applied.set(self, [])
      await subscribe(
        { bus: buses[i]!, log, ownership: createOwnership(list, self) },
        'test-owned',
        topics.usage,
        (event) => void applied.get(self)!.push(event.tenant_id),
      )
    }
    for (const t of tenants)
      for (const bus of buses) await bus.publish(topics.usage, usage(`evt_${t}`, t))
    for (const self of list)
      expect(applied.get(self)).toEqual(tenants.filter((t) => ownerOf(t, list) === self))
    const { values } = await eventsElsewhere.get()
    expect(values.find((v) => v.labels.consumer === 'test-owned')?.value).toBe(tenants.length)
  })

  it('applies every event without an ownership (one instance)', async () => {
    const bus = createMemoryBus()
    const got: string[] = []
    await subscribe({ bus, log }, 'test-all', topics.usage, (e) => void got.push(e.tenant_id))
    await bus.publish(topics.usage, usage('evt_1', 'shop-1'))
    await bus.publish(topics.usage, usage('evt_2', 'shop-2'))
    expect(got).toEqual(['shop-1', 'shop-2'])
  })
})
