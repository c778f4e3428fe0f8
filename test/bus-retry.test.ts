import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createServer } from 'node:net'
import { type EmbeddedBroker, startBroker } from '../daemon/broker.ts'
import type { EventEnvelope } from '../schema/events.ts'
import { createMqttBus, type EventBus } from '../services/kernel/bus.ts'
import { createLogger } from '../services/kernel/log.ts'
import { eventually } from './support/platform.ts'

const log = createLogger('bus-retry-test')
log.level = -999
const TOPIC = 'mobilemoney.test.retry'

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

const event = (id: string): EventEnvelope => ({
  id,
  type: TOPIC,
  version: 1,
  tenant_id: 'acme',
  occurred_at: new Date().toISOString(),
  data: {},
})

/**
 * A relay marks an event sent once the broker has it, so a consumer that acknowledges an event
 * its handler never applied loses it for good (DESIGN §7). A handler that keeps failing holds
 * its event, and the consumer's later ones, until it applies it or the bus closes.
 */
describe('a consumer whose handler fails', () => {
  let broker: EmbeddedBroker
  let publisher: EventBus
  const busOf = (clientId: string) =>
    createMqttBus({ url: broker.url, username: 'u', password: 'p', clientId, log })
  beforeAll(async () => {
    const port = await freePort()
    broker = await startBroker({ host: '127.0.0.1', port, username: 'u', password: 'p', log })
    publisher = await busOf('retry-publisher')
  })
  afterAll(async () => {
    await publisher.close()
    await broker.close()
  })

  it('applies an event whose handler failed five times, and the next one only after it', async () => {
    const consumer = await busOf('retry-consumer')
    const applied: string[] = []
    let failures = 0
    await consumer.subscribe(TOPIC, (e) => {
      if (e.id === 'evt_stubborn' && failures < 5) {
        failures++
        throw new Error('database is locked')
      }
      applied.push(e.id)
    })
    await publisher.publish(TOPIC, event('evt_stubborn'))
    await publisher.publish(TOPIC, event('evt_next'))
    await eventually(() => applied.length === 2, 15_000, 'both events applied')
    expect(failures).toBe(5)
    expect(applied).toEqual(['evt_stubborn', 'evt_next'])
    await consumer.close()
  }, 20_000)

  it('leaves an event still failing when the bus closes to its session, which hands it over again', async () => {
    const first = await busOf('retry-session')
    let attempts = 0
    await first.subscribe(TOPIC, () => {
      attempts++
      throw new Error('the tenant database cannot be opened')
    })
    await publisher.publish(TOPIC, event('evt_held'))
    await eventually(() => attempts >= 2, 5000, 'the handler tried twice')
    await first.close()
    const tried = attempts
    const again = await createMqttBus({
      url: broker.url,
      username: 'u',
      password: 'p',
      clientId: 'retry-session',
      log,
      deferred: true,
    })
    const applied: string[] = []
    await again.subscribe(TOPIC, (e) => void applied.push(e.id))
    await again.ready?.()
    await eventually(() => applied.length > 0, 5000, 'the held event handed over again')
    expect(applied).toEqual(['evt_held'])
    // The closed bus tried no more once it was closed.
    expect(attempts).toBe(tried)
    await again.close()
  })
})
