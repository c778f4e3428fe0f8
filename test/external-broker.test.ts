import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import mqtt from 'mqtt'
import { createMqttBus } from '../services/kernel/bus.ts'
import { createLogger } from '../services/kernel/log.ts'
import { startMosquitto } from './support/mosquitto.ts'
import { eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'

const log = createLogger('test')
log.level = -999

describe('with an external broker (Debian mosquitto)', () => {
  let broker: Awaited<ReturnType<typeof startMosquitto>>
  let p: TestPlatform
  beforeAll(async () => {
    broker = await startMosquitto()
    p = await startTestPlatform({ env: { MMP_MQTT_URL: broker.url } })
  })
  afterAll(async () => {
    await p.dispose()
    await broker.stop()
  })

  it('connects every service to it and runs no embedded broker', async () => {
    const client = await mqtt.connectAsync(broker.url)
    // mosquitto publishes its $SYS counters every second; wait for one that counts the services.
    const connected = await new Promise<number>((resolve) => {
      let last = 0
      const timer = setTimeout(() => resolve(last), 4000)
      client.on('message', (_t, m) => {
        last = Number(m.toString())
        if (last >= 10) {
          clearTimeout(timer)
          resolve(last)
        }
      })
      void client.subscribeAsync('$SYS/broker/clients/connected')
    })
    await client.endAsync()
    // nine services plus this client
    expect(connected).toBeGreaterThanOrEqual(10)
    const embedded = await fetch(`http://127.0.0.1:${1883 + p.offset}`).then(
      () => true,
      () => false,
    )
    expect(embedded).toBe(false)
  })

  it('carries kernel events with QoS 1 both ways', async () => {
    const a = await createMqttBus({ url: broker.url, clientId: 'kernel-a', log })
    const b = await createMqttBus({ url: broker.url, clientId: 'kernel-b', log })
    const got: string[] = []
    await b.subscribe('mobilemoney.test.external', (e) => {
      got.push(e.id)
    })
    await a.publish('mobilemoney.test.external', {
      id: 'evt_1',
      type: 'mobilemoney.test.external',
      version: 1,
      tenant_id: 'acme',
      occurred_at: new Date().toISOString(),
      data: {},
    })
    await eventually(() => got.length > 0, 3000, 'the event across the external broker')
    expect(got).toEqual(['evt_1'])
    await a.close()
    await b.close()
  })

  it('hands a consumer that comes back everything its session queued while it was away', async () => {
    const topic = 'mobilemoney.test.away'
    const event = (i: number) => ({
      id: `evt_away_${i}`,
      type: topic,
      version: 1,
      tenant_id: 'acme',
      occurred_at: new Date().toISOString(),
      data: {},
    })
    // The consumer's persistent session learns its subscription, then the consumer goes away.
    const first = await createMqttBus({
      url: broker.url,
      clientId: 'kernel-away',
      log,
      deferred: true,
    })
    await first.subscribe(topic, () => {})
    await first.ready?.()
    await first.close()
    const producer = await createMqttBus({ url: broker.url, clientId: 'kernel-producer', log })
    for (let i = 0; i < 50; i++) await producer.publish(topic, event(i))
    // It comes back as a process does: the bus first, its handlers registered while it starts.
    const again = await createMqttBus({
      url: broker.url,
      clientId: 'kernel-away',
      log,
      deferred: true,
    })
    const got = new Set<string>()
    await again.subscribe(topic, (e) => {
      got.add(e.id)
    })
    await again.ready?.()
    await eventually(() => got.size === 50, 5000, 'the 50 events queued while away')
    await producer.close()
    await again.close()
  })

  it("keeps a consumer's session and its queue across a restart, configured as documented", async () => {
    // docs/scaling.md: persistence on. The tests' broker must really keep sessions, or a test of
    // a broker restart would pass on the relays' replays alone.
    const persistent = await startMosquitto({ persistence: true })
    try {
      const away = await mqtt.connectAsync(persistent.url, { clientId: 'kept', clean: false })
      await away.subscribeAsync('mobilemoney.test.kept', { qos: 1 })
      await away.endAsync()
      await persistent.restart()
      const producer = await mqtt.connectAsync(persistent.url)
      await producer.publishAsync('mobilemoney.test.kept', 'queued', { qos: 1 })
      await producer.endAsync()
      const back = mqtt.connect(persistent.url, { clientId: 'kept', clean: false })
      const got: string[] = []
      back.on('message', (_t, m) => got.push(m.toString()))
      const present = await new Promise<boolean>((resolve) =>
        back.once('connect', (ack) => resolve(ack.sessionPresent)),
      )
      await eventually(() => got.length > 0, 3000, 'the message queued across the restart')
      await back.endAsync()
      expect({ present, got }).toEqual({ present: true, got: ['queued'] })
    } finally {
      await persistent.stop()
    }
  })
})
