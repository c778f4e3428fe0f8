import { afterAll, describe, expect, it } from 'bun:test'
import { createDaraja, ProviderError } from './daraja.ts'

describe('Daraja adapter retries', () => {
  const calls: Record<string, number> = {}
  let failNext = 0
  let status = 503
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname
      calls[path] = (calls[path] ?? 0) + 1
      if (path === '/oauth/v1/generate')
        return Response.json({ access_token: 'tok', expires_in: '3599' })
      if (req.headers.get('authorization') !== 'Bearer tok')
        return Response.json(
          { errorCode: '404.001.03', errorMessage: 'Invalid Access Token' },
          { status: 401 },
        )
      if (failNext > 0) {
        failNext--
        return Response.json({ errorCode: 'x', errorMessage: 'upstream trouble' }, { status })
      }
      if (path === '/mpesa/stkpushquery/v1/query')
        return Response.json(
          {
            requestId: '1',
            errorCode: '500.001.1001',
            errorMessage: 'The transaction is being processed',
          },
          { status: 500 },
        )
      return Response.json({
        MerchantRequestID: 'm-1',
        CheckoutRequestID: 'ws_CO_1',
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
      })
    },
  })
  afterAll(() => server.stop(true))
  const daraja = createDaraja({
    baseUrl: `http://127.0.0.1:${server.port}`,
    consumerKey: 'k',
    consumerSecret: 's',
    shortcode: '174379',
    passkey: 'p',
    initiatorName: 'i',
    securityCredential: 'c',
    minTimeoutMs: 5,
  })
  const input = {
    phoneNumber: '254712345678',
    amount: 1,
    accountReference: 'a',
    transactionDesc: 'b',
    callbackUrl: 'http://127.0.0.1/cb',
  }

  it('retries a 503 and succeeds, caching the OAuth token', async () => {
    failNext = 2
    status = 503
    const before = calls['/mpesa/stkpush/v1/processrequest'] ?? 0
    const r = await daraja.stkPush(input)
    expect(r.CheckoutRequestID).toBe('ws_CO_1')
    expect(calls['/mpesa/stkpush/v1/processrequest']! - before).toBe(3)
    await daraja.stkPush(input)
    expect(calls['/oauth/v1/generate']).toBe(1)
  })

  it('does not retry a 4xx', async () => {
    failNext = 1
    status = 400
    const before = calls['/mpesa/stkpush/v1/processrequest'] ?? 0
    const err = await daraja.stkPush(input).catch((e) => e)
    expect(err).toBeInstanceOf(ProviderError)
    expect((err as ProviderError).status).toBe(400)
    expect(calls['/mpesa/stkpush/v1/processrequest']! - before).toBe(1)
  })

  it("reads the query's 'being processed' 500 as pending, without retrying", async () => {
    const before = calls['/mpesa/stkpushquery/v1/query'] ?? 0
    expect(await daraja.stkQuery('ws_CO_1')).toEqual({ state: 'processing' })
    expect(calls['/mpesa/stkpushquery/v1/query']! - before).toBe(1)
  })

  it('gives up on a network error after the retries', async () => {
    const down = createDaraja({
      baseUrl: 'http://127.0.0.1:9',
      consumerKey: 'k',
      consumerSecret: 's',
      shortcode: '1',
      passkey: 'p',
      initiatorName: 'i',
      securityCredential: 'c',
      retries: 1,
      minTimeoutMs: 5,
    })
    const err = await down.stkPush(input).catch((e) => e)
    expect(err).toBeInstanceOf(ProviderError)
    expect(err).toMatchObject({ status: 0, reached: false })
  })

  it('sends an STK push only once after a 500: the provider may have acted on it', async () => {
    failNext = 1
    status = 500
    const before = calls['/mpesa/stkpush/v1/processrequest'] ?? 0
    const err = await daraja.stkPush(input).catch((e) => e)
    expect(err).toMatchObject({ status: 500, reached: true })
    expect(calls['/mpesa/stkpush/v1/processrequest']! - before).toBe(1)
  })

  it('reports a push that timed out after sending as possibly reached, without retrying it', async () => {
    let pushes = 0
    const hung = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        if (new URL(req.url).pathname === '/oauth/v1/generate')
          return Response.json({ access_token: 'tok', expires_in: '3599' })
        pushes++
        await Bun.sleep(1000)
        return Response.json({})
      },
    })
    try {
      const slow = createDaraja({
        baseUrl: `http://127.0.0.1:${hung.port}`,
        consumerKey: 'k',
        consumerSecret: 's',
        shortcode: '1',
        passkey: 'p',
        initiatorName: 'i',
        securityCredential: 'c',
        minTimeoutMs: 5,
        timeoutMs: 100,
      })
      const err = await slow.stkPush(input).catch((e) => e)
      expect(err).toMatchObject({ status: 0, reached: true })
      expect(pushes).toBe(1)
    } finally {
      hung.stop(true)
    }
  })
})
