import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { STK_RESULTS } from '../services/payment/result-codes.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

const SECRET = `whsec_${Buffer.from('daraja-outcomes-signing-secret-01').toString('base64')}`

/**
 * Every documented Daraja STK outcome, end to end through the gateway against the simulator:
 * each result code the simulator is asked for by a test phone number ends in the status and the
 * owner-facing sentence of the one table (result-codes.ts); production callback variants are
 * taken; a phone holds one prompt at a time; Daraja's refusals before it takes a push fail it at
 * once; a push whose answer was lost is found in the provider's own record.
 */
describe('Daraja outcomes end to end', () => {
  let p: TestPlatform
  let shop: ReturnType<typeof api>
  let other: ReturnType<typeof api>
  let operator: ReturnType<typeof api>
  let sim: ReturnType<typeof api>

  beforeAll(async () => {
    p = await startTestPlatform({
      only: 'gateway,auth,tenant,payment,webhook,simulator,broker',
      env: { MMP_RECONCILE_AFTER: '1' },
    })
    operator = api(p.gateway, await p.login())
    shop = await createTenantAdmin(p, { id: 'daraja-shop', plan: 'pro' })
    other = await createTenantAdmin(p, { id: 'daraja-other', plan: 'pro' })
    sim = api(p.url('simulator'))
  }, 60_000)

  const receiver = startWebhookReceiver(SECRET)
  let pairs = 0
  afterAll(async () => {
    receiver.stop()
    await p?.dispose()
  })

  const push = (client: ReturnType<typeof api>, phone: string, extra = {}, key?: string) =>
    client.post(
      '/api/v1/payments/stkpush',
      {
        phone_number: phone,
        amount: 150,
        account_reference: 'ORDER-7',
        transaction_desc: 'Order 7',
        ...extra,
      },
      key ? { 'idempotency-key': key } : {},
    )

  const final = (client: ReturnType<typeof api>, id: string) =>
    eventually(
      async () => {
        const r = await client.get(`/api/v1/payments/status/${id}`)
        return r.status === 200 && !['pending', 'unknown'].includes(r.body.status) ? r.body : null
      },
      15_000,
      `the final status of ${id}`,
    )

  const byPhone: Array<[string, number]> = [
    ['254700000001', 1],
    ['254700000004', 4],
    ['254700000015', 15],
    ['254700000017', 17],
    ['254700000026', 26],
    ['254700001001', 1001],
    ['254700001019', 1019],
    ['254700001025', 1025],
    ['254700001031', 1031],
    ['254700001032', 1032],
    ['254700001037', 1037],
    ['254700002001', 2001],
    ['254700002028', 2028],
    ['254700009998', 9999],
  ]
  for (const [phone, code] of byPhone)
    it(`ends result code ${code} as ${STK_RESULTS[code]!.status}, with its sentence`, async () => {
      const res = await push(shop, phone)
      expect(res.status).toBe(202)
      const done = await final(shop, res.body.checkout_request_id)
      expect(done).toMatchObject({
        status: STK_RESULTS[code]!.status,
        result_code: code,
        result_message: STK_RESULTS[code]!.message,
      })
    })

  it("tells the tenant's webhook what happened in the same words", async () => {
    const hook = await other.post('/api/v1/webhooks', {
      url: `${receiver.url}/other`,
      events: ['payment.failed'],
      secret: SECRET,
    })
    expect(hook.status).toBe(201)
    const res = await push(other, '254700031032')
    expect(res.status).toBe(202)
    const hit = await eventually(
      async () =>
        receiver.hits.find(
          (h) =>
            h.path === '/other' &&
            h.body.data?.checkout_request_id === res.body.checkout_request_id,
        ),
      20_000,
      'the payment.failed webhook',
    )
    expect(hit.verified).toBe(true)
    expect(hit.body.data).toMatchObject({
      status: 'cancelled',
      result_code: 1032,
      result_message: STK_RESULTS[1032]!.message,
    })
  })

  it('answers a second push to the same phone 409 PHONE_BUSY with Retry-After while the first is open', async () => {
    const phone = '254711119999' // success whose callback never comes: it stays pending
    const first = await push(shop, phone)
    expect(first.status).toBe(202)
    const second = await push(shop, phone, { account_reference: 'ORDER-8' })
    expect(second.status).toBe(409)
    expect(second.headers.get('content-type')).toContain('application/problem+json')
    expect(second.body).toMatchObject({ code: 'PHONE_BUSY', status: 409 })
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Number(second.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    // Another phone is free.
    expect((await push(shop, '254711119998')).status).toBe(202)
  })

  it('replays a retried key instead of calling its own open prompt busy', async () => {
    const phone = '254711129999'
    const first = await push(shop, phone, {}, 'busy-replay-1')
    expect(first.status).toBe(202)
    const again = await push(shop, phone, {}, 'busy-replay-1')
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.checkout_request_id).toBe(first.body.checkout_request_id)
    const other = await push(shop, phone, {}, 'busy-replay-2')
    expect(other.status).toBe(409)
    expect(other.body).toMatchObject({ code: 'PHONE_BUSY' })
  })

  it("fails a push at once when M-Pesa holds the phone for another tenant's prompt, with a retry hint", async () => {
    // Two tenants push one phone at once: M-Pesa (not mmp, whose hold is per tenant) refuses
    // the second while the first prompt is open (the simulator's delay). A pair that did not
    // overlap is tried again with another phone.
    const [a, b] = await eventually(
      async () => {
        const phone = `25471111${String(++pairs).padStart(4, '0')}`
        const pair = await Promise.all([push(shop, phone), push(other, phone)])
        return pair.some((r) => r.status === 409) ? pair : null
      },
      10_000,
      'two pushes to one phone to overlap',
    )
    expect([a.status, b.status].sort()).toEqual([202, 409])
    const refused = a.status === 409 ? a : b
    expect(refused.body).toMatchObject({ code: 'PHONE_BUSY' })
    expect(refused.body.detail).toContain('Unable to lock subscriber')
    expect(Number(refused.headers.get('retry-after'))).toBe(60)
  })

  it('fails a push M-Pesa was too busy to take, frees its key, and says to try later', async () => {
    const key = 'busy-key-1'
    const res = await push(shop, '254711115002', {}, key)
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ code: 'BAD_GATEWAY' })
    expect(res.body.detail).toContain('500.003.02')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    const failed = await shop.get(`/api/v1/payments/status/${res.body.payment_id}`)
    expect(failed.body).toMatchObject({ status: 'failed' })
    expect(failed.body.result_message).toContain('nothing was charged')
    // The key is free: the retry is a new attempt, not a replay of the failure.
    const again = await push(shop, '254711115002', {}, key)
    expect(again.status).toBe(502)
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(again.body.payment_id).not.toBe(res.body.payment_id)
  })

  it('settles a push whose answer was a 500 after M-Pesa took it, from its callback', async () => {
    const res = await push(shop, '254711115001')
    expect(res.status).toBe(202)
    expect(res.body.status).toBe('unknown')
    const done = await final(shop, res.body.checkout_request_id)
    expect(done).toMatchObject({ status: 'success', result_code: 0 })
  })

  it("settles a push whose answer and callback were both lost from M-Pesa's own record (Pull Transactions)", async () => {
    const res = await push(shop, '254711115004', { account_reference: 'LOST-1', amount: 321 })
    expect(res.status).toBe(202)
    expect(res.body.status).toBe('unknown')
    const id = res.body.checkout_request_id as string
    const done = await eventually(
      async () => {
        await operator.post('/api/v1/payments/reconcile', {})
        const r = await shop.get(`/api/v1/payments/status/${id}`)
        return r.body.status === 'success' ? r.body : null
      },
      15_000,
      'reconciliation to find the lost push',
    )
    expect(done.mpesa_receipt_number).toMatch(/^[A-Z0-9]{10}$/)
    expect(done.amount).toBe(321)
    // Settled once: reconciling again changes nothing.
    const again = await operator.post('/api/v1/payments/reconcile', {})
    expect(again.status).toBe(200)
    expect((await shop.get(`/api/v1/payments/status/${id}`)).body).toMatchObject({
      status: 'success',
      mpesa_receipt_number: done.mpesa_receipt_number,
      updated_at: done.updated_at,
    })
  })

  /** A push whose callback never comes (9999), and the URL Daraja would call back. */
  const silentPush = async (phone: string) => {
    const res = await push(shop, phone)
    expect(res.status).toBe(202)
    const id = res.body.checkout_request_id as string
    const rec = await sim.get(`/simulator/requests/${id}`)
    const url = new URL(String(rec.body.request.CallBackURL))
    return { id, path: url.pathname + url.search, merchant: rec.body.merchantRequestId as string }
  }
  const anon = () => api(p.gateway)

  const variants: Array<{ name: string; code: number; desc: string; status: string }> = [
    {
      name: 'Request Cancelled by user.',
      code: 1032,
      desc: 'Request Cancelled by user.',
      status: 'cancelled',
    },
    {
      name: 'Request cancelled by user',
      code: 1032,
      desc: 'Request cancelled by user',
      status: 'cancelled',
    },
    {
      name: 'DS timeout with a period',
      code: 1037,
      desc: 'DS timeout user cannot be reached.',
      status: 'timeout',
    },
    {
      name: 'DS timeout without a period',
      code: 1037,
      desc: 'DS timeout user cannot be reached',
      status: 'timeout',
    },
    {
      name: '2028 product assignment',
      code: 2028,
      desc: 'The request is not permitted according to product assignment.',
      status: 'failed',
    },
  ]
  for (const [i, v] of variants.entries())
    it(`takes the production callback "${v.name}"`, async () => {
      const { id, path, merchant } = await silentPush(`2547200${i}9999`)
      const ack = await anon().post(path, {
        Body: {
          stkCallback: {
            MerchantRequestID: merchant,
            CheckoutRequestID: id,
            ResultCode: v.code,
            ResultDesc: v.desc,
          },
        },
      })
      expect(ack.status).toBe(200)
      expect(ack.body).toMatchObject({ ResultCode: 0 })
      const done = await final(shop, id)
      expect(done).toMatchObject({ status: v.status, result_code: v.code, result_desc: v.desc })
      expect(done.result_message).toBe(STK_RESULTS[v.code]!.message)
    })

  it('raises the operator alert when M-Pesa answers 2028 (the shortcode is not set up for it)', async () => {
    const res = await push(shop, '254700042028')
    expect(res.status).toBe(202)
    expect(await final(shop, res.body.checkout_request_id)).toMatchObject({ result_code: 2028 })
    await eventually(
      async () => {
        const r = await operator.get('/api/v1/payments/alerts')
        return r.body.alerts?.some((a: { name: string }) => a.name === 'provider_setup')
      },
      10_000,
      'the provider_setup alert',
    )
  })

  for (const [name, amount] of [
    ['"Value":1.00', '1.00'],
    ['"Value":5', '5'],
  ] as const)
    it(`takes a success callback with ${name} and a Balance item with no Value`, async () => {
      const phone = name.includes('1.00') ? '254730019999' : '254730029999'
      const { id, path, merchant } = await silentPush(phone)
      const body = `{"Body":{"stkCallback":{"MerchantRequestID":"${merchant}","CheckoutRequestID":"${id}","ResultCode":0,"ResultDesc":"The service request is processed successfully.","CallbackMetadata":{"Item":[{"Name":"Amount","Value":${amount}},{"Name":"MpesaReceiptNumber","Value":"TST${phone.slice(-7)}"},{"Name":"Balance"},{"Name":"TransactionDate","Value":20261127101010},{"Name":"PhoneNumber","Value":${phone}}]}}}}`
      const ack = await fetch(`${p.gateway}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      expect(ack.status).toBe(200)
      const done = await final(shop, id)
      expect(done).toMatchObject({
        status: 'success',
        mpesa_receipt_number: `TST${phone.slice(-7)}`,
      })
    })

  it('takes an empty callback body and asks M-Pesa instead', async () => {
    const { id, path } = await silentPush('254730039999')
    const ack = await fetch(`${p.gateway}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '',
    })
    expect(ack.status).toBe(200)
    const done = await final(shop, id)
    expect(done).toMatchObject({ status: 'success', result_code: 0 })
  })
})
