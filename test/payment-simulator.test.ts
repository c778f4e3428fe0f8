import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { darajaTimestamp, stkPassword } from '../services/payment/daraja.ts'
import { createSimulator } from '../services/simulator/index.ts'
import { eventually } from './support/platform.ts'

/**
 * The simulator answers M-Pesa Express (STK push) and OAuth as production Daraja documents them
 * (daraja_docs_v3: Authorization, M-Pesa Express Simulate and Query, Pull Transactions), so a
 * developer who tests on it is not surprised when live.
 */
describe('the simulator is as strict as production for OAuth and STK push', () => {
  let sim: ReturnType<typeof createSimulator>
  let base: string
  const callbacks: Array<Record<string, any>> = []
  const hook = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      callbacks.push((await req.json()) as Record<string, any>)
      return Response.json({ ResultCode: 0, ResultDesc: 'Accepted' })
    },
  })

  beforeAll(() => {
    sim = createSimulator({ delayMs: 300, version: 'test' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    base = `http://127.0.0.1:${sim.server!.port}`
  })
  afterAll(async () => {
    hook.stop(true)
    await sim?.stop()
  })

  const token = async (secret = 'mmp-simulator-secret') => {
    const basic = Buffer.from(`mmp-simulator-key:${secret}`).toString('base64')
    const res = await fetch(`${base}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    })
    return { status: res.status, body: (await res.json()) as Record<string, any> }
  }

  const post = async (path: string, bearer: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as Record<string, any> }
  }

  const stk = (phone: string, over: Record<string, unknown> = {}) => {
    const ts = darajaTimestamp(new Date())
    return {
      BusinessShortCode: '174379',
      Password: stkPassword('174379', 'mmp-simulator-passkey', ts),
      Timestamp: ts,
      TransactionType: 'CustomerPayBillOnline',
      Amount: 10,
      PartyA: phone,
      PartyB: '174379',
      PhoneNumber: phone,
      CallBackURL: `http://127.0.0.1:${hook.port}/cb`,
      AccountReference: 'ACC1',
      ...over,
    }
  }

  const callbackFor = (id: string) =>
    eventually(
      async () => callbacks.find((c) => c.Body?.stkCallback?.CheckoutRequestID === id),
      10_000,
      `the callback of ${id}`,
    )

  it('invalidates the previous token when a new one is generated; a bad token is 404.001.03', async () => {
    const first = (await token()).body.access_token as string
    expect(
      (await post('/mpesa/stkpush/v1/processrequest', first, stk('254700100001'))).status,
    ).toBe(200)
    const second = (await token()).body.access_token as string
    const stale = await post('/mpesa/stkpush/v1/processrequest', first, stk('254700100002'))
    expect(stale).toMatchObject({ status: 404, body: { errorCode: '404.001.03' } })
    expect(
      (await post('/mpesa/stkpush/v1/processrequest', second, stk('254700100002'))).status,
    ).toBe(200)
    expect((await token('wrong')).status).toBe(400)
  })

  it('takes a push without TransactionDesc (the one optional field)', async () => {
    const t = (await token()).body.access_token
    const res = await post('/mpesa/stkpush/v1/processrequest', t, stk('254700100003'))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ ResponseCode: '0' })
  })

  it('answers a wrong password or shortcode HTTP 500 500.001.1001, as production does', async () => {
    const t = (await token()).body.access_token
    const wrong = await post(
      '/mpesa/stkpush/v1/processrequest',
      t,
      stk('254700100004', { Password: 'bm9wZQ==' }),
    )
    expect(wrong).toMatchObject({
      status: 500,
      body: { errorCode: '500.001.1001', errorMessage: 'Wrong credentials' },
    })
    const merchant = await post(
      '/mpesa/stkpush/v1/processrequest',
      t,
      stk('254700100004', { BusinessShortCode: '600999' }),
    )
    expect(merchant).toMatchObject({
      status: 500,
      body: { errorCode: '500.001.1001', errorMessage: 'Merchant does not exist' },
    })
  })

  it('refuses a second push to a phone whose prompt is open: Unable to lock subscriber', async () => {
    const t = (await token()).body.access_token
    const first = await post('/mpesa/stkpush/v1/processrequest', t, stk('254700100005'))
    expect(first.status).toBe(200)
    const second = await post('/mpesa/stkpush/v1/processrequest', t, stk('254700100005'))
    expect(second).toMatchObject({ status: 500, body: { errorCode: '500.001.1001' } })
    expect(second.body.errorMessage).toContain('Unable to lock subscriber')
    await callbackFor(first.body.CheckoutRequestID)
    // Once the prompt is answered the phone is free again.
    expect((await post('/mpesa/stkpush/v1/processrequest', t, stk('254700100005'))).status).toBe(
      200,
    )
  })

  for (const [i, [name, over, code]] of (
    [
      ['a PartyB other than the shortcode', { PartyB: '600000' }, 2028],
      ['a BuyGoods push to the paybill', { TransactionType: 'CustomerBuyGoodsOnline' }, 2028],
      ['an amount of 0', { Amount: 0 }, 2],
      ['an amount of 250,001', { Amount: 250_001 }, 3],
    ] as const
  ).entries())
    it(`takes ${name} and ends it with result code ${code} in the callback`, async () => {
      const t = (await token()).body.access_token
      const res = await post('/mpesa/stkpush/v1/processrequest', t, stk(`25470020000${i}`, over))
      expect(res.status).toBe(200)
      const cb = await callbackFor(res.body.CheckoutRequestID)
      expect(cb.Body.stkCallback).toMatchObject({ ResultCode: code })
      expect(cb.Body.stkCallback.CallbackMetadata).toBeUndefined()
    })

  it('lists a completed payment in Pull Transactions by reference, phone, amount and time', async () => {
    const t = (await token()).body.access_token
    const res = await post(
      '/mpesa/stkpush/v1/processrequest',
      t,
      stk('254700100006', { AccountReference: 'PULL-ME', Amount: 77 }),
    )
    const cb = await callbackFor(res.body.CheckoutRequestID)
    const receipt = cb.Body.stkCallback.CallbackMetadata.Item.find(
      (i: { Name: string }) => i.Name === 'MpesaReceiptNumber',
    ).Value
    const eat = (d: Date) =>
      new Date(d.getTime() + 3 * 3600_000).toISOString().slice(0, 19).replace('T', ' ')
    const pulled = await post('/pulltransactions/v1/query', t, {
      ShortCode: '174379',
      StartDate: eat(new Date(Date.now() - 60_000)),
      EndDate: eat(new Date()),
      OffSetValue: '0',
    })
    expect(pulled).toMatchObject({ status: 200, body: { ResponseCode: '1000' } })
    expect(pulled.body.Response[0]).toContainEqual(
      expect.objectContaining({
        transactionId: receipt,
        billreference: 'PULL-ME',
        msisdn: 254700100006,
        amount: '77.00',
      }),
    )
    const other = await post('/pulltransactions/v1/query', t, {
      ShortCode: '600000',
      StartDate: eat(new Date()),
      EndDate: eat(new Date()),
      OffSetValue: '0',
    })
    expect(other).toMatchObject({ status: 400, body: { errorCode: '400.001' } })
  })
})
