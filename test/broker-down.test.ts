import { afterAll, describe, expect, it } from 'bun:test'
import { createServer } from 'node:net'
import { startBroker } from '../daemon/broker.ts'
import { createLogger } from '../services/kernel/log.ts'
import { eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'

/**
 * `mmp serve` with its external broker down: it starts (no worker exits or crash-loops), answers
 * logins, reads and writes, `/health` says the broker is still warming up, and the events written
 * meanwhile wait in the outbox until the broker answers.
 */
const credentials = { username: 'mmp-test', password: 'broker-down-test-password' }

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('starting while the broker is down', () => {
  let broker: Awaited<ReturnType<typeof startBroker>> | undefined
  let p: TestPlatform | undefined
  afterAll(async () => {
    await p?.dispose()
    await broker?.close()
  })

  it('serves reads and logins at once, and delivers the events once the broker is up', async () => {
    const port = await freePort()
    // The default `mmp serve` on this box: two workers.
    p = await startTestPlatform({
      env: {
        MMP_MQTT_URL: `mqtt://127.0.0.1:${port}`,
        MMP_MQTT_USERNAME: credentials.username,
        MMP_MQTT_PASSWORD: credentials.password,
        MMP_WORKERS: '2',
      },
    })
    const health = await fetch(`${p.gateway}/health`)
    expect(health.status).toBe(200)
    const body = (await health.json()) as { warming?: Record<string, string> }
    expect(Object.keys(body.warming ?? {})).toContain('broker')
    // Each service's own port says the same.
    const analytics = (await (await fetch(`${p.url('analytics')}/health`)).json()) as {
      warming?: Record<string, string>
    }
    expect(Object.keys(analytics.warming ?? {})).toContain('broker')

    const admin = await createTenantAdmin(p, { id: 'nobroker', plan: 'pro' })
    const write = await admin.post('/api/v1/parser/transactions', {
      transactions: [
        {
          occurred_at: '2026-01-05T10:00:00.000Z',
          amount: 250,
          direction: 'in',
          description: 'Payment from customer',
          receipt_number: 'NB0000001',
        },
      ],
    })
    expect(write.status).toBeLessThan(300)
    const read = await admin.get('/api/v1/analytics/summary')
    expect(read.status).toBe(200)
    expect(read.body.total_transactions).toBe(0)

    const log = createLogger('test-broker')
    log.level = -999
    broker = await startBroker({ host: '127.0.0.1', port, ...credentials, log })
    await eventually(
      async () => (await admin.get('/api/v1/analytics/summary')).body?.total_transactions === 1,
      30_000,
      'the event that waited in the outbox reaches analytics',
    )
    await eventually(
      async () => {
        const h = (await (await fetch(`${p!.gateway}/health`)).json()) as { warming?: unknown }
        return h.warming === undefined
      },
      30_000,
      'nothing left warming up',
    )
    expect(p.logs()).not.toContain('a worker stopped')
  }, 120_000)
})
