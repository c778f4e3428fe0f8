import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createSimulator } from '../services/simulator/index.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenantAdmin } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'
type Client = ReturnType<typeof api>

/** Daraja's TransTime (Nairobi time) `ms` from now. */
const transTime = (ms = 0) =>
  new Date(Date.now() + ms + 3 * 3600_000).toISOString().replace(/[-:T]/g, '').slice(0, 14)

const confirmation = (over: Record<string, string>) => ({
  TransactionType: 'Buy Goods',
  TransID: 'TXXXXXXXXX',
  TransTime: transTime(),
  TransAmount: '100.00',
  BusinessShortCode: '',
  BillRefNumber: '',
  InvoiceNumber: '',
  OrgAccountBalance: '',
  ThirdPartyTransID: '',
  MSISDN: '2547 ***** 126',
  FirstName: 'JANE',
  MiddleName: '',
  LastName: 'DOE',
  ...over,
})

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/**
 * C2B money is verified before it counts: a confirmation (which Daraja does not sign) is stored
 * and answered, and only a Transaction Status query that agrees turns it into money.
 */
describe('C2B verification end to end', () => {
  let p: TestPlatform
  let receiver: ReturnType<typeof startWebhookReceiver>
  const sim = () => api(p.url('simulator'))

  /** A tenant with a webhook endpoint and a till registered with its own initiator. */
  async function shop(id: string, shortcode: string, initiator = true) {
    const admin = await createTenantAdmin(p, { id })
    const hook = await admin.post('/api/v1/webhooks', {
      url: `${receiver.url}/${id}`,
      events: ['payment.success'],
      secret: SECRET,
    })
    expect(hook.status).toBe(201)
    const reg = await admin.post('/api/v1/payments/c2b/register', {
      shortcode,
      response_type: 'Completed',
      ...(initiator ? { initiator_name: `${id}api`, security_credential: 'c3VwZXItc2VjcmV0' } : {}),
    })
    expect(reg.status).toBe(201)
    return { admin, till: reg.body as { confirmation_url: string; validation_url: string } }
  }

  const c2bPayment = async (client: Client, transId: string) => {
    const r = await client.get(`/api/v1/payments/c2b/payments/${transId}`)
    return r.status === 200 ? r.body : null
  }
  const transactionsOf = async (client: Client, receipt: string) => {
    const r = await client.get('/api/v1/analytics/transactions?limit=500')
    expect(r.status).toBe(200)
    return (r.body.data as Array<Record<string, any>>).filter((t) => t.receipt_number === receipt)
  }
  /** A genuine payment through the simulator, counted: everything before it was applied. */
  async function genuine(client: Client, shortcode: string, phone: string, amount = 10) {
    expect(
      (
        await client.post('/api/v1/payments/c2b/simulate', {
          shortcode,
          amount,
          phone_number: phone,
        })
      ).status,
    ).toBe(202)
    const transId = await eventually(async () => {
      const r = await sim().get(`/simulator/received?phone=${phone}&kind=c2b`)
      return (r.body.requests as Array<{ id: string }>).at(-1)?.id ?? null
    })
    await eventually(
      async () => ((await transactionsOf(client, transId)).length ? true : null),
      20_000,
      'the genuine payment in analytics',
    )
    return transId
  }

  beforeAll(async () => {
    receiver = startWebhookReceiver(SECRET)
    p = await startTestPlatform()
  }, 90_000)

  afterAll(async () => {
    receiver?.stop()
    await p?.dispose()
  })

  it('a forged confirmation with a valid token never reaches analytics, billing, cashflow or a webhook', async () => {
    const { admin, till } = await shop('forged', '600310')
    const usageBefore = (await admin.get('/api/v1/billing/usage/forged')).body.metrics.transactions
      .used as number
    const forged = confirmation({
      TransID: 'TFORGE0001',
      TransAmount: '249999.00',
      OrgAccountBalance: '9999999.00',
      BusinessShortCode: '600310',
    })
    const r = await post(till.confirmation_url, forged)
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ ResultCode: 0, ResultDesc: 'Accepted' })
    const row = await eventually(
      async () => {
        const c = await c2bPayment(admin, 'TFORGE0001')
        return c?.status === 'rejected' ? c : null
      },
      20_000,
      'the forged confirmation rejected',
    )
    expect(row.status_reason).toMatch(/not found|no such|could not be found/i)
    const transId = await genuine(admin, '600310', '254712300126', 40)
    expect(await transactionsOf(admin, 'TFORGE0001')).toEqual([])
    expect(await c2bPayment(admin, transId)).toMatchObject({ status: 'verified', amount: 40 })
    await eventually(
      () =>
        receiver.hits.find((h) => h.tenant === 'forged' && h.body.data?.receipt_number === transId),
      15_000,
      'the genuine webhook',
    )
    expect(receiver.hits.filter((h) => h.body.data?.receipt_number === 'TFORGE0001')).toEqual([])
    const summary = await admin.get('/api/v1/cashflow/summary/forged')
    expect(summary.body.balance ?? 0).not.toBe(9_999_999)
    const usage = await eventually(async () => {
      const u = (await admin.get('/api/v1/billing/usage/forged')).body.metrics.transactions
      return u.used > usageBefore ? u : null
    })
    expect(usage.used).toBe(usageBefore + 1)
  }, 60_000)

  it('refuses values outside Daraja ranges: TransAmount 1e15, cents, TransTime in 1970 or 2099', async () => {
    const { admin, till } = await shop('ranges', '600320')
    const cases: Array<Record<string, string> & { TransID: string }> = [
      { TransID: 'TRANGE0001', TransAmount: '1e15' },
      { TransID: 'TRANGE0002', TransAmount: '250001' },
      { TransID: 'TRANGE0003', TransAmount: '10.50' },
      { TransID: 'TRANGE0004', TransAmount: '0' },
      { TransID: 'TRANGE0005', TransTime: '19700101000000' },
      { TransID: 'TRANGE0006', TransTime: '20990101000000' },
      { TransID: 'TRANGE0007', TransTime: transTime(-26 * 3600_000) },
    ]
    for (const c of cases) {
      const r = await post(
        till.confirmation_url,
        confirmation({ BusinessShortCode: '600320', ...c }),
      )
      expect(r.status, JSON.stringify(c)).toBe(422)
      expect((await r.json()).code).toBe('C2B_OUT_OF_RANGE')
    }
    const v = await post(
      till.validation_url,
      confirmation({ BusinessShortCode: '600320', TransAmount: '1e15' }),
    )
    expect(await v.json()).toEqual({ ResultCode: 'C2B00013', ResultDesc: 'Rejected' })
    for (const c of cases) expect(await c2bPayment(admin, c.TransID)).toBeNull()
  }, 30_000)

  it('a confirmation of a real receipt with another amount and shortcode is rejected with the reason', async () => {
    const { admin, till } = await shop('mismatch', '600330')
    const push = await admin.post('/api/v1/payments/stkpush', {
      phone_number: '0712300331',
      amount: 25,
      account_reference: 'ORDER-1',
      transaction_desc: 'Sugar',
    })
    expect(push.status).toBe(202)
    const paid = await eventually(async () => {
      const r = await admin.get(`/api/v1/payments/status/${push.body.checkout_request_id}`)
      return r.body.mpesa_receipt_number ? r.body : null
    }, 20_000)
    // The receipt is real (an STK payment of 25 to the platform's shortcode), the rest is forged.
    const fake = confirmation({
      TransID: paid.mpesa_receipt_number,
      TransAmount: '2500.00',
      BusinessShortCode: '600330',
    })
    expect((await post(till.confirmation_url, fake)).status).toBe(200)
    const row = await eventually(
      async () => {
        const c = await c2bPayment(admin, paid.mpesa_receipt_number)
        return c?.status === 'rejected' ? c : null
      },
      20_000,
      'the mismatching confirmation rejected',
    )
    expect(row.status_reason).toMatch(/amount/i)
    const c2bOnly = (await transactionsOf(admin, paid.mpesa_receipt_number)).filter(
      (t) => t.amount === 2500,
    )
    expect(c2bOnly).toEqual([])
  }, 60_000)

  it("verifies a till without an initiator with the platform's on the simulator (a sandbox answers it)", async () => {
    const { admin, till } = await shop('plain', '600340', false)
    expect((await admin.get('/api/v1/payments/c2b/shortcodes')).body.data[0]).toMatchObject({
      verification: 'query',
      initiator_name: null,
    })
    const transId = await genuine(admin, '600340', '254712300341', 15)
    expect(await c2bPayment(admin, transId)).toMatchObject({ status: 'verified', amount: 15 })
    const forged = confirmation({ TransID: 'TPLAIN0001', BusinessShortCode: '600340' })
    expect((await post(till.confirmation_url, forged)).status).toBe(200)
    const row = await eventually(async () => {
      const c = await c2bPayment(admin, 'TPLAIN0001')
      return c?.status === 'rejected' ? c : null
    }, 20_000)
    expect(row.counted).toBe(false)
  }, 60_000)

  it('shows token-bearing URLs to Admins only, once, and rotates them', async () => {
    const { admin, till } = await shop('tokens', '600350')
    const viewer = await admin.post('/api/v1/auth/api-keys', { name: 'reader', role: 'Viewer' })
    expect(viewer.status).toBe(201)
    const listed = await admin.get('/api/v1/payments/c2b/shortcodes')
    expect(listed.status).toBe(200)
    expect(JSON.stringify(listed.body)).not.toContain('sig=')
    const asViewer = await api(p.gateway, viewer.body.key).get('/api/v1/payments/c2b/shortcodes')
    expect(asViewer.status).toBe(200)
    expect(asViewer.body.data.map((s: { shortcode: string }) => s.shortcode)).toEqual(['600350'])
    expect(JSON.stringify(asViewer.body)).not.toContain('sig=')
    const conf = new URL(till.confirmation_url).searchParams.get('sig')
    const valid = new URL(till.validation_url).searchParams.get('sig')
    expect(conf).not.toBe(valid)
    // The validation token does not open the confirmation URL.
    const swapped = till.confirmation_url.replace(`sig=${conf}`, `sig=${valid}`)
    expect((await post(swapped, confirmation({ TransID: 'TSWAP00001' }))).status).toBe(401)
    const rotated = await admin.post('/api/v1/payments/c2b/shortcodes/600350/rotate')
    expect(rotated.status).toBe(200)
    expect(rotated.body.confirmation_url).not.toBe(till.confirmation_url)
    expect(
      (await post(till.confirmation_url, confirmation({ TransID: 'TOLD000001' }))).status,
    ).toBe(401)
    await genuine(admin, '600350', '254712300351', 5)
  }, 60_000)
  it("queries and reverses the tenant's own STK payment on the platform paybill", async () => {
    const admin = await createTenantAdmin(p, { id: 'stkshop' })
    const push = await admin.post('/api/v1/payments/stkpush', {
      phone_number: '0712300361',
      amount: 60,
      account_reference: 'ORDER-9',
      transaction_desc: 'Flour',
    })
    expect(push.status).toBe(202)
    const paid = await eventually(async () => {
      const r = await admin.get(`/api/v1/payments/status/${push.body.checkout_request_id}`)
      return r.body.mpesa_receipt_number ? r.body : null
    }, 20_000)
    const receipt = paid.mpesa_receipt_number as string
    const status = await admin.post('/api/v1/payments/transaction-status', {
      transaction_id: receipt,
    })
    expect(status.status).toBe(202)
    const done = await eventually(async () => {
      const r = await admin.get(`/api/v1/payments/transaction-status/${status.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(done).toMatchObject({ status: 'completed', result: { ReceiptNo: receipt, Amount: 60 } })
    const rev = await admin.post('/api/v1/payments/reversals', {
      transaction_id: receipt,
      amount: 60,
    })
    expect(rev.status).toBe(202)
    const reversed = await eventually(async () => {
      const r = await admin.get(`/api/v1/payments/reversals/${rev.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(reversed).toMatchObject({
      status: 'completed',
      result: { OriginalTransactionID: receipt },
    })
    // Another tenant still cannot ask about it, nor about the platform's shortcode at large.
    const other = await createTenantAdmin(p, { id: 'stkother' })
    expect(
      (await other.post('/api/v1/payments/transaction-status', { transaction_id: receipt })).status,
    ).toBe(404)
    expect(
      (await other.post('/api/v1/payments/account-balance', { shortcode: '174379' })).status,
    ).toBe(404)
  }, 60_000)
})

/**
 * Live (mpesa.base_url set, here to a simulator of the test's own): confirmations to a till
 * nobody can query come only from Safaricom's published addresses.
 */
describe('C2B source check once live', () => {
  let p: TestPlatform
  let sim: ReturnType<typeof createSimulator>

  beforeAll(async () => {
    sim = createSimulator({ delayMs: 50, version: 'test' }).listen({
      port: 0,
      hostname: '127.0.0.1',
    })
    p = await startTestPlatform({
      env: { MMP_MPESA_BASE_URL: `http://127.0.0.1:${sim.server!.port}` },
    })
  }, 90_000)

  afterAll(async () => {
    await p?.dispose()
    await sim?.stop()
  })

  it("refuses a confirmation from an address that is not the provider's, for a till without an initiator", async () => {
    const admin = await createTenantAdmin(p, { id: 'guarded' })
    const plain = await admin.post('/api/v1/payments/c2b/register', {
      shortcode: '600410',
      response_type: 'Completed',
    })
    expect(plain.status).toBe(201)
    expect(plain.body.verification).toBe('source')
    const r = await post(
      plain.body.confirmation_url,
      confirmation({ TransID: 'TSRC000001', BusinessShortCode: '600410' }),
    )
    expect(r.status).toBe(401)
    expect((await admin.get('/api/v1/payments/c2b/payments/TSRC000001')).status).toBe(404)
    // A till with an initiator is verified by query wherever the confirmation comes from.
    const checked = await admin.post('/api/v1/payments/c2b/register', {
      shortcode: '600420',
      response_type: 'Completed',
      initiator_name: 'guardedapi',
      security_credential: 'c3VwZXItc2VjcmV0',
    })
    expect(checked.body.verification).toBe('query')
    const forged = await post(
      checked.body.confirmation_url,
      confirmation({ TransID: 'TSRC000002', BusinessShortCode: '600420' }),
    )
    expect(forged.status).toBe(200)
    const row = await eventually(async () => {
      const c = await admin.get('/api/v1/payments/c2b/payments/TSRC000002')
      return c.body.status === 'rejected' ? c.body : null
    }, 20_000)
    expect(row.counted).toBe(false)
  }, 60_000)
})
