import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { migrations } from '../../schema/webhook/migrations.ts'
import { type Db, openDatabase } from '../kernel/db.ts'
import { createTestKit, eventually, type TestKit } from '../kernel/testing.ts'
import { createDispatcher } from './dispatcher.ts'
import { OK_OUTCOME, testDispatcherDeps } from './test-kit.ts'

/** The dispatcher's deps over `db` with `maxInFlight` lanes: a failure is retried a minute on. */
const depsOf = (db: Db, maxInFlight: number) =>
  testDispatcherDeps(db, { maxInFlight, retrySchedule: [0, 60_000] })

/** Endpoints `whe_0..n-1` of tenant `t`, each with `perEndpoint` deliveries due now. */
function seed(db: Db, endpoints: number, perEndpoint: number) {
  const endpoint = db.sqlite.query(
    `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, status, created_at, updated_at)
     VALUES (?, 't', 'http://127.0.0.1:1/hook', '["payment.success"]', 'x', 'enabled', 'x', 'x')`,
  )
  const delivery = db.sqlite.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, message_id, event, payload, status,
       attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, 't', ?, ?, 'payment.success', '{}', 'pending', 0, 0, 'x', 'x')`,
  )
  db.write(() => {
    for (let e = 0; e < endpoints; e++) {
      endpoint.run(`whe_${e}`)
      for (let i = 0; i < perEndpoint; i++)
        delivery.run(`del_${e}_${i}`, `whe_${e}`, `msg_${e}_${i}`)
    }
  })
}

const delivered = (db: Db) =>
  db.sqlite
    .query<{ id: string }, []>("SELECT id FROM webhook_deliveries WHERE status = 'delivered'")
    .all()
    .map((r) => r.id)

describe('the dispatcher', () => {
  let kit: TestKit
  beforeAll(async () => {
    kit = await createTestKit('webhook', { migrations })
  })
  afterAll(() => kit.cleanup())

  it('commits a turn of outcomes together with the claims that refill every lane', async () => {
    const db = openDatabase(join(kit.dataDir, 'turns.db'), { migrations })
    seed(db, 4, 50)
    const deps = depsOf(db, 16)
    const write = db.write.bind(db)
    let transactions = 0
    let depth = 0
    db.write = (fn) => {
      if (depth === 0) transactions++
      depth++
      try {
        return write(fn)
      } finally {
        depth--
      }
    }
    const sent: string[] = []
    const dispatcher = createDispatcher(deps, {
      send: async (_endpoint, delivery, _now, onAnswer) => {
        sent.push(delivery.messageId)
        onAnswer(200)
        return OK_OUTCOME
      },
    })
    dispatcher.start()
    await eventually(() => delivered(db).length === 200)
    await dispatcher.stop()
    expect(new Set(sent).size).toBe(200)
    expect(sent.length).toBe(200)
    // 4 lanes of 16 in flight: 200 deliveries are 4 rounds, each one transaction that records the
    // round's outcomes and claims the next (plus start-up recovery and the sweep).
    expect(transactions).toBeLessThanOrEqual(8)
    db.close()
  })

  it('commits a 2xx as delivered, at the time it arrived, before its attempt has finished', async () => {
    const db = openDatabase(join(kit.dataDir, 'answered.db'), { migrations })
    seed(db, 1, 1)
    const deps = depsOf(db, 4)
    deps.clock.set('2026-03-01T10:00:00.000Z')
    const finish: Array<() => void> = []
    const dispatcher = createDispatcher(deps, {
      send: (_endpoint, _delivery, _now, onAnswer) => {
        onAnswer(204)
        return new Promise((resolve) => finish.push(() => resolve(OK_OUTCOME)))
      },
    })
    dispatcher.start()
    const row = () =>
      db.sqlite
        .query<{ status: string; last_status_code: number; delivered_at: string }, []>(
          'SELECT status, last_status_code, delivered_at FROM webhook_deliveries',
        )
        .get()
    await eventually(() => row()?.status === 'delivered', 5000, 'the 2xx committed')
    expect(row()).toMatchObject({ status: 'delivered', last_status_code: 204 })
    // The service's clock (moved to March), not the wall clock: a few ms past the set time.
    const lag = Date.parse(row()!.delivered_at) - Date.parse('2026-03-01T10:00:00.000Z')
    expect(lag).toBeGreaterThanOrEqual(0)
    expect(lag).toBeLessThan(5000)
    for (const f of finish) f()
    await dispatcher.stop()
    db.close()
  })

  it('sends again after a restart every delivery whose outcome was not committed, never a committed one', async () => {
    const file = join(kit.dataDir, 'crash.db')
    const first = openDatabase(file, { migrations })
    seed(first, 1, 30)
    const hanging: Array<() => void> = []
    let calls = 0
    const before = createDispatcher(depsOf(first, 16), {
      send: (_endpoint, _delivery, _now, onAnswer) => {
        if (++calls <= 10) {
          onAnswer(200)
          return Promise.resolve(OK_OUTCOME)
        }
        return new Promise((resolve) =>
          hanging.push(() => {
            onAnswer(200)
            resolve(OK_OUTCOME)
          }),
        )
      },
    })
    before.start()
    await eventually(() => delivered(first).length === 10 && hanging.length === 16)
    const committed = delivered(first)
    // Three receivers answer 2xx, and the process dies before the turn that would commit them.
    for (const answer of hanging.slice(0, 3)) answer()
    first.close()
    await before.stop(0)

    const second = openDatabase(file, { migrations })
    const resent: string[] = []
    const after = createDispatcher(depsOf(second, 16), {
      send: async (_endpoint, delivery) => {
        resent.push(delivery.messageId)
        return OK_OUTCOME
      },
    })
    after.start()
    await eventually(() => delivered(second).length === 30)
    await after.stop()
    expect(resent.length).toBe(20)
    expect(resent.filter((m) => committed.includes(m.replace('msg_', 'del_')))).toEqual([])
    const attempts = second.sqlite
      .query<{ n: number }, []>(
        'SELECT COUNT(*) AS n FROM webhook_attempts GROUP BY delivery_id HAVING COUNT(*) > 1',
      )
      .all()
    expect(attempts).toEqual([])
    second.close()
  })

  it('hands the queue to a dispatcher started later on the file: the first claims nothing more', async () => {
    const file = join(kit.dataDir, 'takeover.db')
    const first = openDatabase(file, { migrations })
    const second = openDatabase(file, { migrations })
    seed(first, 1, 100)
    const sent: Array<{ by: 'a' | 'b'; messageId: string }> = []
    // The first dispatcher's receiver answers when the test says so; the second's at once.
    const hanging: Array<() => void> = []
    const answerAll = () => {
      for (const answer of hanging.splice(0)) answer()
    }
    const a = createDispatcher(depsOf(first, 4), {
      send: (_endpoint, delivery) => {
        sent.push({ by: 'a', messageId: delivery.messageId })
        return new Promise((resolve) => hanging.push(() => resolve(OK_OUTCOME)))
      },
    })
    a.start()
    await eventually(() => sent.length === 4)
    answerAll()
    await eventually(() => sent.length === 8 && delivered(first).length === 4)
    const committed = delivered(first)
    const b = createDispatcher(depsOf(second, 4), {
      send: async (_endpoint, delivery) => {
        sent.push({ by: 'b', messageId: delivery.messageId })
        return OK_OUTCOME
      },
    })
    b.start()
    const atTakeover = sent.length
    // The first one's attempts in flight end; its next turn records them and claims nothing.
    answerAll()
    await eventually(() => {
      answerAll()
      return delivered(second).length === 100
    })
    await a.stop()
    await b.stop()
    expect(sent.slice(atTakeover).filter((s) => s.by === 'a')).toEqual([])
    expect(new Set(sent.map((s) => s.messageId)).size).toBe(100)
    // Sent twice: at most what the first had in flight when the second took over, as after a
    // crash; never one whose 2xx was committed.
    expect(sent.length - 100).toBeLessThanOrEqual(4)
    const byB = sent.filter((s) => s.by === 'b').map((s) => s.messageId.replace('msg_', 'del_'))
    expect(byB.filter((id) => committed.includes(id))).toEqual([])
    first.close()
    second.close()
  })

  it('sends an attempt in flight once when its endpoint is disabled and enabled meanwhile', async () => {
    const db = openDatabase(join(kit.dataDir, 'toggle.db'), { migrations })
    seed(db, 1, 8)
    const write = db.write.bind(db)
    let transactions = 0
    db.write = (fn) => {
      transactions++
      return write(fn)
    }
    const sent: string[] = []
    const hanging: Array<() => void> = []
    const dispatcher = createDispatcher(depsOf(db, 4), {
      send: (_endpoint, delivery) => {
        sent.push(delivery.messageId)
        return new Promise((resolve) => hanging.push(() => resolve(OK_OUTCOME)))
      },
    })
    dispatcher.start()
    await eventually(() => sent.length === 4)
    const setStatus = (status: string) => {
      db.sqlite.query('UPDATE webhook_endpoints SET status = ? WHERE id = ?').run(status, 'whe_0')
      const before = transactions
      dispatcher.endpointChanged('whe_0')
      return eventually(() => transactions > before, 5000, `a turn after the endpoint is ${status}`)
    }
    await setStatus('disabled')
    const dead = () =>
      db.sqlite
        .query<{ id: string }, []>("SELECT id FROM webhook_deliveries WHERE status = 'dead'")
        .all()
    // The four waiting ones end dead; the four in flight are left to their outcomes.
    await eventually(() => dead().length === 4)
    await setStatus('enabled')
    for (const answer of hanging.splice(0)) answer()
    await eventually(() => delivered(db).length === 4)
    await dispatcher.stop()
    expect(sent.length).toBe(4)
    expect(delivered(db).sort()).toEqual(['del_0_0', 'del_0_1', 'del_0_2', 'del_0_3'])
    db.close()
  })
})
