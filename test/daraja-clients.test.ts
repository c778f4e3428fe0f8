import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Mpesa as DarajaJs } from 'daraja.js'
import { routes as darajaJsRoutes } from 'daraja.js/dist/models/routes'
import { Mpesa as MpesaApi } from 'mpesa-api'
// @ts-expect-error mpesa-node ships no type declarations
import MpesaNode from 'mpesa-node'
import { createSimulator } from '../services/simulator/index.ts'
import { eventually } from './support/platform.ts'

const KEY = 'mmp-simulator-key'
const SECRET = 'mmp-simulator-secret'
const SHORTCODE = '174379'
const PASSKEY = 'mmp-simulator-passkey'

/**
 * The Daraja clients people use from npm, pointed at the simulator instead of
 * sandbox.safaricom.co.ke: what they send is accepted and called back as Daraja would, and what
 * Daraja refuses (a 20-character TransactionDesc, a TransactionType with a trailing space) is
 * refused with Daraja's error body.
 */
describe('npm Daraja clients against the simulator', () => {
  let sim: ReturnType<typeof createSimulator>
  let base: string
  let receiver: ReturnType<typeof Bun.serve>
  let hook: string
  const received: Array<{ path: string; body: any }> = []

  beforeAll(() => {
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        received.push({ path: new URL(req.url).pathname, body: await req.json() })
        return Response.json({ ResultCode: '0', ResultDesc: 'Accepted' })
      },
    })
    hook = `http://127.0.0.1:${receiver.port}`
    sim = createSimulator({ delayMs: 20, version: 'test' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    base = `http://127.0.0.1:${sim.server!.port}`
  })

  afterAll(async () => {
    await sim?.stop()
    receiver?.stop(true)
  })

  const callbackFor = (id: string) =>
    eventually(() => received.find((r) => r.body?.Body?.stkCallback?.CheckoutRequestID === id))

  describe('mpesa-node', () => {
    const client = () => {
      const m = new MpesaNode({
        consumerKey: KEY,
        consumerSecret: SECRET,
        environment: 'sandbox',
        shortCode: '600100',
        lipaNaMpesaShortCode: SHORTCODE,
        lipaNaMpesaShortPass: PASSKEY,
      })
      m.baseURL = base
      return m
    }

    it('pushes an STK prompt (UTC timestamp and all) and gets the callback', async () => {
      const r = await client().lipaNaMpesaOnline(254712345678, 10, `${hook}/stk`, 'INV1', 'Order 1')
      expect(r.data).toMatchObject({ ResponseCode: '0' })
      const cb = await callbackFor(r.data.CheckoutRequestID)
      expect(cb.body.Body.stkCallback.ResultCode).toBe(0)
    })

    it('is refused, like Daraja refuses it, with its default 20-character TransactionDesc', async () => {
      const err = await client()
        .lipaNaMpesaOnline(254712345678, 10, `${hook}/stk`, 'INV1')
        .catch((e: any) => e)
      expect(err.response.status).toBe(400)
      expect(err.response.data).toMatchObject({
        errorCode: '400.002.02',
        errorMessage: 'Bad Request - Invalid TransactionDesc',
      })
      expect(typeof err.response.data.requestId).toBe('string')
    })

    it('registers C2B URLs and simulates a customer paying: validation, then confirmation', async () => {
      const reg = await client().c2bRegister(`${hook}/confirm`, `${hook}/validate`, '600100')
      expect(reg.data).toMatchObject({ ResponseCode: '0', ResponseDescription: 'Success' })
      const pay = await client().c2bSimulate(
        254712345678,
        100,
        'ACC-1',
        'CustomerPayBillOnline',
        '600100',
      )
      expect(pay.data.ResponseCode).toBe('0')
      const confirmation = await eventually(() =>
        received.find((r) => r.path === '/confirm' && r.body.BillRefNumber === 'ACC-1'),
      )
      expect(
        received.some(
          (r) => r.path === '/validate' && r.body.TransID === confirmation.body.TransID,
        ),
      ).toBe(true)
      expect(confirmation.body).toMatchObject({
        TransactionType: 'Pay Bill',
        TransAmount: '100.00',
        BusinessShortCode: '600100',
        MSISDN: '2547 ***** 678',
      })
      expect(confirmation.body.TransID).toMatch(/^[A-Z][A-Z0-9]{9}$/)
    })

    it('is refused a registration whose URL Daraja would refuse (it names "mpesa")', async () => {
      const err = await client()
        .c2bRegister(`${hook}/mpesa/confirm`, `${hook}/validate`, '600100')
        .catch((e: any) => e)
      expect(err.response.status).toBe(400)
      expect(err.response.data.errorMessage).toBe('Bad Request - Invalid ConfirmationURL')
    })
  })

  describe('daraja.js', () => {
    const client = () => {
      darajaJsRoutes.sandbox = base
      return new DarajaJs(
        {
          consumerKey: KEY,
          consumerSecret: SECRET,
          securityCredential: 'x',
          organizationShortCode: 600100,
        },
        'sandbox',
      )
    }

    it('pushes an STK prompt and gets the callback', async () => {
      // daraja.js computes the timestamp twice; across a second boundary its password is wrong,
      // which Daraja refuses too: one retry.
      const push = () =>
        client()
          .stkPush()
          .shortCode(SHORTCODE)
          .amount(5)
          .callbackURL(`${hook}/stk`)
          .phoneNumber(254712345679)
          .accountNumber('INV2')
          .description('Order 2')
          .lipaNaMpesaPassKey(PASSKEY)
          .send()
      const r = await push().catch(push)
      expect(r.isOkay()).toBe(true)
      const cb = await callbackFor(r.getTransactionID())
      expect(cb.body.Body.stkCallback.ResultCode).toBe(0)
    })

    it('registers C2B URLs and simulates a till payment', async () => {
      const reg = await client()
        .c2b()
        .shortCode('600101')
        .confirmationURL(`${hook}/confirm`)
        .validationURL(`${hook}/validate`)
        .callbackURL(`${hook}/confirm`)
        .registerURLS()
      expect(reg.isOkay()).toBe(true)
      const pay = await client()
        .c2b()
        .shortCode('600101')
        .amount(42)
        .phoneNumber(254712345680)
        .simulate()
      expect(pay.isOkay()).toBe(true)
      await eventually(() =>
        received.find((r) => r.path === '/confirm' && r.body.BusinessShortCode === '600101'),
      )
    })
  })

  describe('mpesa-api', () => {
    const client = () => {
      const m: any = new MpesaApi(
        { clientKey: KEY, clientSecret: SECRET, securityCredential: 'x' } as never,
        'sandbox',
      )
      // Its transport takes a host without a port; keep its requests, send them to the simulator.
      const send = async (
        method: string,
        path: string,
        body: unknown,
        headers: Record<string, string>,
      ) => {
        const res = await fetch(base + path, {
          method,
          headers: { 'Content-Type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        const result = { statusCode: res.status, data: await res.json() }
        if (!res.ok) throw result
        return result
      }
      m.http = {
        get: (path: string, o: { headers: Record<string, string> }) =>
          send('GET', path, undefined, o.headers),
        post: (path: string, body: unknown, o: { headers: Record<string, string> }) =>
          send('POST', path, body, o.headers),
      }
      return m
    }
    const stk = (extra: Record<string, unknown>) =>
      client().lipaNaMpesaOnline({
        BusinessShortCode: SHORTCODE,
        passKey: PASSKEY,
        TransactionDesc: 'Order 3',
        PartyA: '254712345681',
        PartyB: SHORTCODE,
        PhoneNumber: '254712345681',
        Amount: 7,
        AccountReference: 'INV3',
        CallBackURL: `${hook}/stk`,
        ...extra,
      })

    it('pushes an STK prompt when the TransactionType is given', async () => {
      const r = await stk({ TransactionType: 'CustomerPayBillOnline' })
      expect(r.ResponseCode).toBe('0')
      await callbackFor(r.CheckoutRequestID)
    })

    it("is refused with its default TransactionType ('CustomerPayBillOnline ', a trailing space)", async () => {
      const err = await stk({}).catch((e: any) => e)
      expect(err.statusCode).toBe(400)
      expect(err.data.errorMessage).toBe('Bad Request - Invalid TransactionType')
    })

    it('registers C2B URLs and simulates a customer paying', async () => {
      const reg = await client().c2bRegister({
        ShortCode: '600102',
        ResponseType: 'Completed',
        ConfirmationURL: `${hook}/confirm`,
        ValidationURL: `${hook}/validate`,
      })
      expect(reg.ResponseCode).toBe('0')
      const pay = await client().c2bSimulate({
        ShortCode: '600102',
        CommandID: 'CustomerBuyGoodsOnline',
        Amount: 15,
        Msisdn: '254712345682',
      })
      expect(pay.ResponseCode).toBe('0')
      const c = await eventually(() =>
        received.find((r) => r.path === '/confirm' && r.body.BusinessShortCode === '600102'),
      )
      expect(c.body).toMatchObject({ TransactionType: 'Buy Goods', BillRefNumber: '' })
    })
  })

  it('refuses a body that is not JSON and accepts any case of the auth scheme', async () => {
    const token = (
      await (
        await fetch(`${base}/oauth/v1/generate?grant_type=client_credentials`, {
          headers: { authorization: `BASIC ${btoa(`${KEY}:${SECRET}`)}` },
        })
      ).json()
    ).access_token as string
    const form = await fetch(`${base}/mpesa/c2b/v1/simulate`, {
      method: 'POST',
      headers: {
        authorization: `bearer ${token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'ShortCode=600100',
    })
    expect(form.status).toBe(400)
    expect(await form.json()).toMatchObject({ errorCode: '400.002.05' })
  })
})
