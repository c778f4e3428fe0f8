import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startMosquitto } from './support/mosquitto.ts'
import { pickOffset, startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * The simulator comes along with payment unless another process on the host already serves its
 * port; then payment uses that one. It must never share the port: two simulators on one port
 * (SO_REUSEPORT) would each know only the requests and OAuth tokens that reached it, and the
 * kernel would split a payment's push and its query between them.
 */
describe('payment next to a simulator of its own process', () => {
  let broker: Awaited<ReturnType<typeof startMosquitto>>
  let simulator: TestPlatform
  let payment: TestPlatform
  beforeAll(async () => {
    broker = await startMosquitto()
    const offset = await pickOffset()
    const env = { MMP_MQTT_URL: broker.url }
    simulator = await startTestPlatform({ only: 'simulator', offset, env })
    payment = await startTestPlatform({ only: 'payment', offset, env })
  }, 60_000)
  afterAll(async () => {
    await payment?.dispose()
    await simulator?.dispose()
    await broker?.stop()
  })

  it('leaves the port to the simulator already there', async () => {
    const base = simulator.url('simulator')
    const basic = Buffer.from('mmp-simulator-key:mmp-simulator-secret').toString('base64')
    const grant = await fetch(`${base}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    })
    const { access_token } = (await grant.json()) as { access_token: string }
    // The default shortcode and passkey (mpesa.shortcode, mpesa.passkey) sign the query.
    const Timestamp = '20260101120000'
    const query = {
      BusinessShortCode: '174379',
      Password: Buffer.from(`174379mmp-simulator-passkey${Timestamp}`).toString('base64'),
      Timestamp,
      CheckoutRequestID: 'ws_CO_none',
    }
    // A token from one connection holds on every other: one simulator answers all of them. A
    // second simulator on the port would not know the token and refuse it (404.001.03).
    const answers = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const res = await fetch(`${base}/mpesa/stkpushquery/v1/query`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${access_token}`,
            'content-type': 'application/json',
            connection: 'close',
          },
          body: JSON.stringify(query),
        })
        const body = (await res.json()) as { errorCode?: string }
        return `${res.status} ${body.errorCode}`
      }),
    )
    // The query's own answer for a CheckoutRequestID it never issued, from every connection.
    expect(answers).toEqual(Array.from({ length: 24 }, () => '400 400.002.02'))
  })
})
