import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { eventually } from '../kernel/testing.ts'
import { createSimulator } from './index.ts'

/** What a callback receiver got, by path. */
interface Hit {
  path: string
  body: Record<string, any>
}

/** A simulator (sandbox or production-like) talked to over HTTP like a Daraja client would. */
async function start(production: boolean) {
  const sim = createSimulator({ delayMs: 0, version: 'test', production }).listen({
    port: 0,
    hostname: '127.0.0.1',
  })
  const base = `http://127.0.0.1:${sim.server!.port}`
  const basic = Buffer.from('mmp-simulator-key:mmp-simulator-secret').toString('base64')
  const token = (
    (await (
      await fetch(`${base}/oauth/v1/generate?grant_type=client_credentials`, {
        headers: { authorization: `Basic ${basic}` },
      })
    ).json()) as { access_token: string }
  ).access_token
  const call = async (path: string, body: unknown, method = 'POST') => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
    })
    return { status: r.status, body: (await r.json()) as Record<string, any> }
  }
  return { sim, base, call }
}

describe('simulator: C2B and business APIs as strict as production', () => {
  const hits: Hit[] = []
  let receiver: ReturnType<typeof Bun.serve>
  let hook = ''
  let sandbox: Awaited<ReturnType<typeof start>>
  let production: Awaited<ReturnType<typeof start>>

  beforeAll(async () => {
    receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const path = new URL(req.url).pathname
        hits.push({ path, body: (await req.json()) as Record<string, any> })
        if (path === '/validate')
          return Response.json({
            ResultCode: '0',
            ResultDesc: 'Accepted',
            ThirdPartyTransID: 'TP-77',
          })
        return Response.json({ ResultCode: 0, ResultDesc: 'Accepted' })
      },
    })
    hook = `http://127.0.0.1:${receiver.port}`
    sandbox = await start(false)
    production = await start(true)
  })

  afterAll(async () => {
    await sandbox?.sim.stop()
    await production?.sim.stop()
    receiver?.stop(true)
  })

  const register = (s: typeof sandbox, shortcode: string, scheme = 'https') =>
    s.call('/mpesa/c2b/v2/registerurl', {
      ShortCode: shortcode,
      ResponseType: 'Completed',
      ConfirmationURL: `${scheme}://shop.example/confirm`,
      ValidationURL: `${scheme}://shop.example/validate`,
    })

  it('production refuses http URLs and a second registration of a shortcode; the sandbox allows both', async () => {
    const http = await register(production, '600501', 'http')
    expect(http).toMatchObject({ status: 400, body: { errorCode: '400.002.02' } })
    expect((await register(production, '600501')).body.ResponseCode).toBe('0')
    const again = await register(production, '600501')
    expect(again).toMatchObject({
      status: 500,
      body: { errorCode: '500.003.1001', errorMessage: 'Urls are already registered' },
    })
    // Deleted on the portal (URL management), it registers again.
    const deleted = await fetch(`${production.base}/simulator/c2b/urls/600501`, {
      method: 'DELETE',
    })
    expect(deleted.status).toBe(200)
    expect((await register(production, '600501')).body.ResponseCode).toBe('0')
    expect((await register(sandbox, '600502', 'http')).body.ResponseCode).toBe('0')
    expect((await register(sandbox, '600502', 'http')).body.ResponseCode).toBe('0')
  })

  it('sends no balance with validation and echoes the ThirdPartyTransID it answered in the confirmation', async () => {
    const r = await sandbox.call('/mpesa/c2b/v2/registerurl', {
      ShortCode: '600503',
      ResponseType: 'Completed',
      ConfirmationURL: `${hook}/confirm`,
      ValidationURL: `${hook}/validate`,
    })
    expect(r.body.ResponseCode).toBe('0')
    const paid = await sandbox.call('/mpesa/c2b/v2/simulate', {
      ShortCode: '600503',
      CommandID: 'CustomerPayBillOnline',
      Amount: 75,
      Msisdn: '254712300503',
      BillRefNumber: 'INV-1',
    })
    expect(paid.status).toBe(200)
    const confirmed = await eventually(() =>
      hits.find((h) => h.path === '/confirm' && h.body.BusinessShortCode === '600503'),
    )
    const validated = hits.find(
      (h) => h.path === '/validate' && h.body.TransID === confirmed.body.TransID,
    )
    expect(validated!.body.OrgAccountBalance).toBe('')
    expect(confirmed.body.ThirdPartyTransID).toBe('TP-77')
    expect(Number(confirmed.body.OrgAccountBalance)).toBeGreaterThan(0)
  })

  const b2c = (originator: string, phone: string) =>
    sandbox.call('/mpesa/b2c/v3/paymentrequest', {
      OriginatorConversationID: originator,
      InitiatorName: 'api',
      SecurityCredential: 'cred',
      CommandID: 'BusinessPayment',
      Amount: 120,
      PartyA: '600000',
      PartyB: phone,
      Remarks: 'salary',
      QueueTimeOutURL: `${hook}/b2c-timeout`,
      ResultURL: `${hook}/b2c-result`,
      Occasion: '',
    })

  it('refuses a repeated B2C OriginatorConversationID as a duplicate and does not pay it again', async () => {
    expect((await b2c('oc-dup-1', '254712300504')).body.ResponseCode).toBe('0')
    const again = await b2c('oc-dup-1', '254712300504')
    expect(again).toMatchObject({
      status: 500,
      body: { errorCode: '500.002.1001', errorMessage: 'Duplicate OriginatorConversationID.' },
    })
    const received = await fetch(`${sandbox.base}/simulator/received?phone=254712300504&kind=b2c`)
    expect(((await received.json()) as { count: number }).count).toBe(1)
  })

  const status = (over: Record<string, unknown>) =>
    sandbox.call('/mpesa/transactionstatus/v1/query', {
      Initiator: 'api',
      SecurityCredential: 'cred',
      CommandID: 'TransactionStatusQuery',
      PartyA: '600000',
      IdentifierType: '4',
      ResultURL: `${hook}/status-result`,
      QueueTimeOutURL: `${hook}/status-timeout`,
      Remarks: 'check',
      Occasion: '',
      ...over,
    })

  it('answers Transaction Status by OriginalConversationID with the original transaction', async () => {
    expect((await b2c('oc-status-1', '254712300505')).body.ResponseCode).toBe('0')
    const paid = await eventually(() =>
      hits.find(
        (h) =>
          h.path === '/b2c-result' && h.body.Result?.OriginatorConversationID === 'oc-status-1',
      ),
    )
    const asked = await status({
      OriginalConversationID: 'oc-status-1',
      OriginatorConversationID: 'st-1',
    })
    expect(asked.body.ResponseCode).toBe('0')
    const result = await eventually(() =>
      hits.find(
        (h) => h.path === '/status-result' && h.body.Result?.OriginatorConversationID === 'st-1',
      ),
    )
    const params = Object.fromEntries(
      (
        result.body.Result.ResultParameters.ResultParameter as Array<{
          Key: string
          Value: unknown
        }>
      ).map((p) => [p.Key, p.Value]),
    )
    expect(params).toMatchObject({
      ReceiptNo: paid.body.Result.TransactionID,
      Amount: 120,
      DebitPartyName: '600000 - Simulated Business',
    })
  })

  it('checks IdentifierType against PartyA, and a reversal receiver is 11', async () => {
    const phoneAsShortcode = await status({ TransactionID: 'TXXXXXXXX1', IdentifierType: '1' })
    expect(phoneAsShortcode).toMatchObject({
      status: 400,
      body: { errorMessage: 'Bad Request - Invalid PartyA' },
    })
    const unknownType = await status({ TransactionID: 'TXXXXXXXX1', IdentifierType: '9' })
    expect(unknownType.body.errorMessage).toBe('Bad Request - Invalid IdentifierType')
    const reversal = await sandbox.call('/mpesa/reversal/v1/request', {
      Initiator: 'api',
      SecurityCredential: 'cred',
      CommandID: 'TransactionReversal',
      TransactionID: 'TXXXXXXXX1',
      Amount: 10,
      ReceiverParty: '600000',
      RecieverIdentifierType: '4',
      ResultURL: `${hook}/rev`,
      QueueTimeOutURL: `${hook}/rev`,
      Remarks: 'wrong till',
    })
    expect(reversal.body.errorMessage).toBe('Bad Request - Invalid RecieverIdentifierType')
  })

  it("answers a wrong method 405.001 and an unknown path 404.001.01 in Daraja's error body", async () => {
    const get = await sandbox.call('/mpesa/stkpush/v1/processrequest', null, 'GET')
    expect(get).toMatchObject({
      status: 405,
      body: { errorCode: '405.001', errorMessage: 'GET Method Not Allowed' },
    })
    const unknown = await sandbox.call('/mpesa/nothing/v1/here', {})
    expect(unknown).toMatchObject({
      status: 404,
      body: { errorCode: '404.001.01', errorMessage: 'Resource not found' },
    })
    expect(typeof unknown.body.requestId).toBe('string')
  })
})
