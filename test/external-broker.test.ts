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
})
