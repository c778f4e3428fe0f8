import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createSimulator } from './index.ts'

/**
 * Every Daraja API of the simulator refuses a missing, made-up or stale bearer token the way
 * Daraja does: HTTP 404 `{errorCode: "404.001.03", errorMessage: "Invalid Access Token"}`. The APIs
 * are read from the simulator's own routes, so one added later is checked too.
 */
describe('simulator: a bad bearer token', () => {
  const sim = createSimulator({ delayMs: 0, version: 'test' })
  let base = ''
  const grant = async () => {
    const basic = Buffer.from('mmp-simulator-key:mmp-simulator-secret').toString('base64')
    const res = await fetch(`${base}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    })
    return ((await res.json()) as { access_token: string }).access_token
  }
  // Daraja's APIs; the simulator's own helpers (/simulator/…) and OAuth take no bearer token.
  const apis = sim.routes
    .filter((r) => r.method === 'POST' && /^\/(mpesa|pulltransactions)\//.test(r.path))
    .map((r) => r.path.replace(':version', 'v1'))

  beforeAll(() => {
    sim.listen({ port: 0, hostname: '127.0.0.1' })
    base = `http://127.0.0.1:${sim.server!.port}`
  })
  afterAll(() => sim.stop())

  it('finds every Daraja API the simulator serves', () => {
    expect(apis).toEqual(
      expect.arrayContaining([
        '/mpesa/stkpush/v1/processrequest',
        '/mpesa/stkpushquery/v1/query',
        '/mpesa/b2c/v1/paymentrequest',
        '/mpesa/c2b/v1/registerurl',
        '/mpesa/c2b/v1/simulate',
        '/mpesa/transactionstatus/v1/query',
        '/mpesa/accountbalance/v1/query',
        '/mpesa/reversal/v1/request',
        '/pulltransactions/v1/register',
        '/pulltransactions/v1/query',
      ]),
    )
  })

  it('answers 404.001.03 on every API, for no token, an unknown one and a replaced one', async () => {
    const stale = await grant()
    const live = await grant() // Daraja: a new token invalidates the previous one.
    const bad = { none: undefined, unknown: 'not-a-token', stale }
    const answers: string[] = []
    for (const path of apis)
      for (const [which, token] of Object.entries(bad)) {
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: '{}',
        })
        const body = (await res.json()) as { errorCode?: string; errorMessage?: string }
        answers.push(`${path} ${which}: ${res.status} ${body.errorCode} ${body.errorMessage}`)
      }
    expect(answers).toEqual(
      apis.flatMap((path) =>
        Object.keys(bad).map((which) => `${path} ${which}: 404 404.001.03 Invalid Access Token`),
      ),
    )
    // The live token passes the check on every API (an empty body is then refused as a bad request).
    for (const path of apis) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${live}` },
        body: '{}',
      })
      const body = (await res.json()) as { errorCode?: string }
      expect(`${path}: ${body.errorCode}`).not.toBe(`${path}: 404.001.03`)
    }
  })
})
