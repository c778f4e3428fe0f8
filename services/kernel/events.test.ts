import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrations } from '../../schema/auth/migrations.ts'
import { createMemoryBus } from './bus.ts'
import { openDatabase } from './db.ts'
import { createRelay, EVENT_RETENTION_MS, emitEvent, handleOnce, pruneDelivered } from './events.ts'
import { createLogger } from './log.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDb = () => {
  const d = mkdtempSync(join(tmpdir(), 'mmp-events-'))
  dirs.push(d)
  return openDatabase(join(d, 'x.db'), { migrations })
}
const log = createLogger('test')
log.level = -999

describe('outbox and relay', () => {
  it('publishes an event only after its transaction commits, in order, once', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    db.write(() => {
      emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } })
      emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 2 } })
    })
    await relay.flush()
    expect(bus.published.map((e) => e.data.n)).toEqual([1, 2])
    await relay.flush()
    expect(bus.published).toHaveLength(2)
  })

  it('republishes recently sent events once the broker connection comes back', async () => {
    const db = tempDb()
    const memory = createMemoryBus()
    let reconnect: (() => void) | undefined
    let republishedOne: () => void = () => {}
    const republished = new Promise<void>((resolve) => {
      republishedOne = resolve
    })
    const bus = {
      ...memory,
      async publish(topic: string, event: (typeof memory.published)[number]) {
        await memory.publish(topic, event)
        if (memory.published.length === 2) republishedOne()
      },
      onReconnect(fn: () => void) {
        reconnect = fn
      },
    }
    const relay = createRelay({ bus, log, replayAfterReconnectMs: 60_000 })
    relay.watch(db)
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
    await relay.flush()
    expect(memory.published.map((e) => e.data.n)).toEqual([1])
    // A restarted broker may have acknowledged the event and lost it: it goes out again.
    reconnect?.()
    await republished
    expect(memory.published.map((e) => e.data.n)).toEqual([1, 1])
    expect(memory.published[1]!.id).toBe(memory.published[0]!.id)
    await relay.stop()
  })

  it('publishes nothing while held, then the unsent and replayed events once released', async () => {
    const db = tempDb()
    // Before a restart: one event sent (a replay window reaches it), one left unsent by a crash.
    const before = createRelay({ bus: createMemoryBus(), log })
    before.watch(db)
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
    await before.flush()
    await before.stop()
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 2 } }))
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log, held: true })
    relay.watch(db, { replaySinceMs: 60_000 })
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 3 } }))
    await relay.flush()
    await relay.settled(db)
    expect(bus.published).toEqual([])
    relay.release()
    await relay.settled(db)
    await relay.flush()
    expect(bus.published.map((e) => e.data.n)).toEqual([1, 2, 3])
  })

  it('publishes nothing from a transaction that rolled back', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    expect(() =>
      db.write(() => {
        emitEvent(db, { topic: 't.a', tenantId: 'acme', data: {} })
        throw new Error('boom')
      }),
    ).toThrow('boom')
    await relay.flush()
    expect(bus.published).toHaveLength(0)
    expect(db.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM outbox').get()?.n).toBe(0)
  })

  it('keeps events in the outbox while paused and sends them when a relay watches again', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const paused = createRelay({ bus, log, paused: true })
    paused.watch(db)
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
    // A flush is a whole pass over the outbox: once it returned, a relay that publishes would have.
    await paused.flush()
    expect(bus.published).toHaveLength(0)
    const unsent = 'SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL'
    expect(db.sqlite.query<{ n: number }, []>(unsent).get()?.n).toBe(1)
    const relay = createRelay({ bus, log })
    relay.watch(db)
    await relay.flush()
    expect(bus.published).toHaveLength(1)
  })
})

describe('handleOnce', () => {
  it('applies an event once per consumer however often it arrives', () => {
    const db = tempDb()
    let applied = 0
    expect(handleOnce(db, 'c1', 'evt_1', () => applied++)).toBe(true)
    expect(handleOnce(db, 'c1', 'evt_1', () => applied++)).toBe(false)
    expect(handleOnce(db, 'c2', 'evt_1', () => applied++)).toBe(true)
    expect(applied).toBe(2)
  })

  it('forgets the inbox record when the effect fails, so a redelivery retries', () => {
    const db = tempDb()
    expect(() =>
      handleOnce(db, 'c1', 'evt_1', () => {
        throw new Error('fail')
      }),
    ).toThrow('fail')
    let applied = 0
    expect(handleOnce(db, 'c1', 'evt_1', () => applied++)).toBe(true)
    expect(applied).toBe(1)
  })
})

describe('pruneDelivered', () => {
  it('deletes sent events and inbox records past the retention, keeping unsent and recent ones', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: {} }))
    await relay.flush()
    handleOnce(db, 'c1', 'evt_old', () => {})
    createRelay({ bus, log, paused: true }).watch(db)
    db.write(() => emitEvent(db, { topic: 't.b', tenantId: 'acme', data: {} }))
    const count = (table: string) =>
      db.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()?.n
    pruneDelivered(db)
    expect([count('outbox'), count('inbox')]).toEqual([2, 1])
    pruneDelivered(db, Date.now() + EVENT_RETENTION_MS + 1000)
    expect([count('outbox'), count('inbox')]).toEqual([1, 0])
    expect(db.sqlite.query<{ topic: string }, []>('SELECT topic FROM outbox').get()?.topic).toBe(
      't.b',
    )
  })
})

describe('bulk writes', () => {
  const unsent = (db: ReturnType<typeof tempDb>) =>
    db.sqlite
      .query<{ n: number }, []>('SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL')
      .get()?.n
  const checkpointPages = (db: ReturnType<typeof tempDb>) =>
    db.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()
      ?.wal_autocheckpoint
  /** The next turn of the loop, when a drain the relay put off after a bulk write has begun. */
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

  it('publishes nothing while a bulk write commits, then everything in one drain after it', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    await relay.settled(db)
    const during: number[] = []
    await relay.bulk(db, async () => {
      for (const n of [1, 2, 3]) {
        db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n } }))
        await nextTurn()
        during.push(bus.published.length)
      }
      expect(checkpointPages(db)).toBe(0)
    })
    expect(during).toEqual([0, 0, 0])
    expect(checkpointPages(db)).toBe(1000)
    await nextTurn()
    await relay.settled(db)
    expect(bus.published.map((e) => e.data.n)).toEqual([1, 2, 3])
    expect(unsent(db)).toBe(0)
    // Checkpointed and truncated: the WAL a bulk write grew does not stay on disk.
    expect(statSync(`${db.path}-wal`).size).toBe(0)
  })

  it('relays what a failed bulk write committed, and nothing of the part that rolled back', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    await relay.settled(db)
    const failed = relay.bulk(db, async () => {
      db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
      await nextTurn()
      db.write(() => {
        emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 2 } })
        throw new Error('disk full')
      })
    })
    await expect(failed).rejects.toThrow('disk full')
    expect(bus.published).toEqual([])
    await nextTurn()
    await relay.settled(db)
    expect(bus.published.map((e) => e.data.n)).toEqual([1])
    expect(db.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM outbox').get()?.n).toBe(1)
    expect(checkpointPages(db)).toBe(1000)
  })

  it('never holds a flush, and lets a drain through once bulkHoldMs has passed', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    await relay.bulk(db, async () => {
      db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
      await relay.flush()
      expect(bus.published).toHaveLength(1)
    })
    const eager = createRelay({ bus, log, bulkHoldMs: 0 })
    const other = tempDb()
    eager.watch(other)
    await eager.bulk(other, async () => {
      other.write(() => emitEvent(other, { topic: 't.a', tenantId: 'acme', data: { n: 2 } }))
      await nextTurn()
      await eager.settled(other)
      expect(bus.published.map((e) => e.data.n)).toEqual([1, 2])
    })
  })

  it('holds while any of two bulk writes on one database runs', async () => {
    const db = tempDb()
    const bus = createMemoryBus()
    const relay = createRelay({ bus, log })
    relay.watch(db)
    await relay.settled(db)
    let finishSecond = () => {}
    const second = relay.bulk(
      db,
      () =>
        new Promise<void>((resolve) => {
          finishSecond = resolve
        }),
    )
    await relay.bulk(db, async () => {
      db.write(() => emitEvent(db, { topic: 't.a', tenantId: 'acme', data: { n: 1 } }))
    })
    await nextTurn()
    expect(bus.published).toEqual([])
    expect(checkpointPages(db)).toBe(0)
    finishSecond()
    await second
    await nextTurn()
    await relay.settled(db)
    expect(bus.published.map((e) => e.data.n)).toEqual([1])
    expect(checkpointPages(db)).toBe(1000)
  })
})
