import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startBroker } from '../daemon/broker.ts'
import { migrations } from '../schema/auth/migrations.ts'
import { createMqttBus } from '../services/kernel/bus.ts'
import { openDatabase } from '../services/kernel/db.ts'
import { createRelay, handleOnce } from '../services/kernel/events.ts'
import { createLogger } from '../services/kernel/log.ts'
import { crashed, DISARMED, rearm } from './support/faults.ts'
import { api, eventually, startTestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { signToken } from './support/tokens.ts'

const dir = mkdtempSync(join(tmpdir(), 'mmp-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const log = createLogger('crash-test')
log.level = -999

describe('an event committed before a crash', () => {
  it('reaches its consumer exactly once after a SIGKILL and two restarts', async () => {
    const producerPath = join(dir, 'producer.db')
    const writer = Bun.spawn(
      [process.execPath, join(import.meta.dir, 'fixtures', 'crash-writer.ts'), producerPath],
      { stdout: 'pipe' },
    )
    const reader = (writer.stdout as ReadableStream<Uint8Array>).getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    const eventId = /committed (\S+)/.exec(first)?.[1]
    expect(eventId).toMatch(/^evt_/)
    writer.kill('SIGKILL')
    await writer.exited
    expect(writer.signalCode).toBe('SIGKILL')

    const port = 21000 + Math.floor(Math.random() * 2000)
    const broker = await startBroker({ host: '127.0.0.1', port, username: 'u', password: 'p', log })
    const url = `mqtt://127.0.0.1:${port}`
    const consumerDb = openDatabase(join(dir, 'consumer.db'), { migrations })
    consumerDb.sqlite.run(
      'CREATE TABLE IF NOT EXISTS seen (event_id TEXT NOT NULL, item TEXT NOT NULL)',
    )
    const consumerBus = await createMqttBus({
      url,
      username: 'u',
      password: 'p',
      clientId: 'consumer',
      log,
    })
    /** Per copy received: true when applied, false when the inbox dropped it as a repeat. */
    const outcomes: boolean[] = []
    await consumerBus.subscribe('mobilemoney.test.crash', (e) => {
      outcomes.push(
        handleOnce(consumerDb, 'crash-test', e.id, () => {
          consumerDb.sqlite
            .query('INSERT INTO seen (event_id, item) VALUES (?, ?)')
            .run(e.id, String(e.data.item))
        }),
      )
    })
    const seen = () =>
      consumerDb.sqlite.query<{ event_id: string; item: string }, []>('SELECT * FROM seen').all()

    // First restart: the relay finds the unsent row and publishes it.
    const producer = openDatabase(producerPath, { migrations })
    expect(
      producer.sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM items').get()?.n,
    ).toBe(1)
    const bus1 = await createMqttBus({
      url,
      username: 'u',
      password: 'p',
      clientId: 'producer-1',
      log,
    })
    const relay1 = createRelay({ bus: bus1, log })
    relay1.watch(producer, { replaySinceMs: 60_000 })
    await eventually(() => seen().length === 1, 5000, 'the unsent event relayed and applied')
    await relay1.stop()
    await bus1.close()
    expect(
      producer.sqlite.query<{ sent_at: string | null }, []>('SELECT sent_at FROM outbox').get()
        ?.sent_at,
    ).not.toBeNull()

    // Second restart: the relay republishes recently sent events; the inbox drops the repeat.
    const bus2 = await createMqttBus({
      url,
      username: 'u',
      password: 'p',
      clientId: 'producer-2',
      log,
    })
    const relay2 = createRelay({ bus: bus2, log })
    const reopened = openDatabase(producerPath, { migrations })
    relay2.watch(reopened, { replaySinceMs: 60_000 })
    await relay2.settled(reopened)
    await eventually(
      () => outcomes.includes(false),
      5000,
      'the republished copy received and dropped by the inbox',
    )
    expect(outcomes[0]).toBe(true)
    expect(outcomes.slice(1).every((applied) => !applied)).toBe(true)
    expect(seen()).toEqual([{ event_id: eventId!, item: 'item-1' }])
    await relay2.stop()
    await bus2.close()
    await consumerBus.close()
    await broker.close()
  })
})

describe('a crash between publishing and marking sent', () => {
  it('relay.after_publish: an event published but not marked sent is applied once', async () => {
    const p = await startTestPlatform({
      only: 'gateway,auth,tenant,parser,categorizer,analytics,broker',
    })
    await createTenants(p.gateway, await p.login(), 'acme')
    await rearm(p, 'relay.after_publish')
    const token = await signToken(p.dataDir, { tenantId: 'acme' })
    const write = await api(p.gateway, token)
      .post('/api/v1/parser/transactions', {
        transactions: [
          {
            occurred_at: '2026-01-05T10:00:00Z',
            amount: 250,
            direction: 'in',
            description: 'Payment from customer',
            receipt_number: 'RLYCRASH01',
          },
        ],
      })
      .catch(() => null)
    await crashed(p, 'relay.after_publish')
    expect(write?.status).toBe(200)

    await p.restart(DISARMED)
    const summary = () => api(p.gateway, token).get('/api/v1/analytics/summary')
    await eventually(
      async () => (await summary()).body?.total_transactions === 1,
      15_000,
      'the crashed write counted by analytics',
    )
    const parser = new Database(join(p.dataDir, 'tenants', '_shared', 'parser.db'), {
      readonly: true,
    })
    const unsent = () =>
      parser
        .query<{ n: number }, []>('SELECT count(*) AS n FROM outbox WHERE sent_at IS NULL')
        .get()?.n
    await eventually(async () => unsent() === 0, 10_000, 'the outbox row marked sent')
    parser.close()
    // Republished and replayed copies are dropped by the inboxes. A later write travels the same
    // outboxes and topics in order behind them: once it is counted, every copy before it was
    // handled, so the totals below are final, not a guess after a sleep.
    const marker = await api(p.gateway, token).post('/api/v1/parser/transactions', {
      transactions: [
        {
          occurred_at: '2026-01-05T11:00:00Z',
          amount: 100,
          direction: 'in',
          description: 'Payment from customer',
          receipt_number: 'RLYCRASH02',
        },
      ],
    })
    expect(marker.status).toBe(200)
    await eventually(
      async () => (await summary()).body?.total_transactions >= 2,
      15_000,
      'the marker write counted by analytics',
    )
    expect((await summary()).body).toMatchObject({ total_transactions: 2, total_amount: 350 })
    await p.dispose()
  }, 60_000)
})
