import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import {
  api,
  eventually,
  OPERATOR,
  startTestPlatform,
  type TestPlatform,
} from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { startWebhookReceiver } from './support/webhook-receiver.ts'

const SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'

/**
 * C2B end to end through the gateway: a tenant's till, the platform's aggregator paybill routed by
 * account number, the simulator calling the registered URLs, and each payment reaching analytics
 * as Revenue and the tenant's receiver as a verified payment.success webhook.
 */
describe('C2B payments end to end', () => {
  let p: TestPlatform
  let operator: ReturnType<typeof api>
  let acme: ReturnType<typeof api>
  let globex: ReturnType<typeof api>
  let receiver: ReturnType<typeof startWebhookReceiver>
  let tillOnce: Promise<{ confirmation_url: string; validation_url: string }> | null = null
  let paybillOnce: Promise<string> | null = null

  /** acme's till 600100, registered once by whichever test needs it first. */
  const registerTill = () => {
    tillOnce ??= (async () => {
      const r = await acme.post(
        '/api/v1/payments/c2b/register',
        { shortcode: '600100', response_type: 'Completed' },
        { 'idempotency-key': 'till-1' },
      )
      expect(r.status).toBe(201)
      return r.body
    })()
    return tillOnce
  }
  /** The platform's aggregator paybill 600200, registered once; globex's account number on it. */
  const registerPaybill = () => {
    paybillOnce ??= (async () => {
      const r = await operator.post('/api/v1/payments/c2b/register', {
        shortcode: '600200',
        response_type: 'Cancelled',
      })
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({ mode: 'aggregator', tenant_id: 'platform' })
      return (await globex.get('/api/v1/payments/c2b/account')).body.account_number as string
    })()
    return paybillOnce
  }
  /** Daraja's TransTime for now (Nairobi time). */
  const transTimeNow = () =>
    new Date(Date.now() + 3 * 3600_000).toISOString().replace(/[-:T]/g, '').slice(0, 14)
  /** A customer pays acme's till through the simulator; resolves to the counted TransID. */
  const payTill = async (phone: string, amount: number) => {
    await registerTill()
    const r = await acme.post('/api/v1/payments/c2b/simulate', {
      shortcode: '600100',
      amount,
      phone_number: phone,
    })
    expect(r.status).toBe(202)
    const [transId] = await eventually(async () => {
      const ids = await transIds(phone.replace(/^0/, '254'))
      return ids.length ? ids : null
    })
    return transId!
  }

  const sim = () => api(p.url('simulator'))
  /** The TransIDs the simulator issued for a payer, oldest first. */
  const transIds = async (phone: string) =>
    (
      (await sim().get(`/simulator/received?phone=${phone}&kind=c2b`)).body.requests as Array<{
        id: string
      }>
    ).map((r) => r.id)
  const transactionsOf = async (client: ReturnType<typeof api>, receipt: string) => {
    const r = await client.get('/api/v1/analytics/transactions?limit=500')
    expect(r.status).toBe(200)
    return (r.body.data as Array<Record<string, any>>).filter((t) => t.receipt_number === receipt)
  }
  const adminOf = async (tenant: string) =>
    api(p.gateway, await p.login(`owner@${tenant}.test`, `${tenant}-Owner-Passphrase-42`))

  beforeAll(async () => {
    receiver = startWebhookReceiver(SECRET)
    p = await startTestPlatform()
    const operatorToken = await p.login()
    operator = api(p.gateway, operatorToken)
    await createTenants(p.gateway, operatorToken, 'acme', 'globex')
    acme = await adminOf('acme')
    globex = await adminOf('globex')
    for (const [client, tenant] of [
      [acme, 'acme'],
      [globex, 'globex'],
    ] as const) {
      const r = await client.post('/api/v1/webhooks', {
        url: `${receiver.url}/${tenant}`,
        events: ['payment.success'],
        secret: SECRET,
      })
      expect(r.status).toBe(201)
    }
  }, 90_000)

  afterAll(async () => {
    receiver?.stop()
    await p?.dispose()
  })

  it('registers a till for one tenant, replays it for the same Idempotency-Key, and refuses it to another with 409', async () => {
    const body = { shortcode: '600100', response_type: 'Completed' }
    const first = await registerTill()
    expect(first).toMatchObject({ shortcode: '600100', status: 'registered', mode: 'tenant' })
    expect(first.confirmation_url).toContain('/api/v1/payments/c2b/confirmation?ref=600100&sig=')
    expect(first.validation_url).toContain('/api/v1/payments/c2b/validation?ref=600100&sig=')
    const again = await acme.post('/api/v1/payments/c2b/register', body, {
      'idempotency-key': 'till-1',
    })
    expect(again.status).toBe(201)
    // The URLs carry the tokens: shown once, so the replay says so instead of repeating them.
    const { confirmation_url: _c, validation_url: _v, ...kept } = first
    expect(again.body).toEqual({ ...kept, shown_once: expect.stringContaining('shown once') })
    const taken = await globex.post('/api/v1/payments/c2b/register', body)
    expect(taken.status).toBe(409)
    // Other tests may register tills of their own for acme: this one is among them, globex's not.
    const shortcodes = async (client: typeof acme) => {
      const listed = await client.get('/api/v1/payments/c2b/shortcodes')
      expect(listed.status).toBe(200)
      expect(JSON.stringify(listed.body)).not.toContain('sig=')
      return listed.body.data.map((s: { shortcode: string }) => s.shortcode)
    }
    expect(await shortcodes(acme)).toContain('600100')
    expect(await shortcodes(globex)).not.toContain('600100')
  })

  it('registers the platform paybill as an aggregator and gives each tenant an account number', async () => {
    const account = await registerPaybill()
    const r = await globex.get('/api/v1/payments/c2b/account')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ tenant_id: 'globex', paybills: ['600200'] })
    expect(account).toMatch(/^\d{6}$/)
    expect(r.body.account_number).toBe(account)
  })

  it('records a till payment as Revenue with the payer masked and sends a verified payment.success with channel c2b', async () => {
    const transId = await payTill('0712345601', 250)
    expect(transId).toMatch(/^[A-Z][A-Z0-9]{9}$/)
    const [txn] = await eventually(
      async () => {
        const found = await transactionsOf(acme, transId!)
        return found.length && found[0]!.category ? found : null
      },
      15_000,
      'the till payment in analytics',
    )
    expect(txn).toMatchObject({
      amount: 250,
      direction: 'in',
      category: 'Revenue',
      counterparty_phone: '2547 ***** 601',
    })
    expect(txn!.counterparty_name).toBeTruthy()
    const hook = await eventually(
      () =>
        receiver.hits.find((h) => h.tenant === 'acme' && h.body.data?.receipt_number === transId),
      15_000,
      'the payment.success webhook',
    )
    expect(hook.verified).toBe(true)
    expect(hook.body).toMatchObject({
      event: 'payment.success',
      data: { channel: 'c2b', amount: 250, phone_number: '2547 ***** 601' },
    })
  }, 30_000)

  it('routes a payment to the aggregator paybill by its account number to that tenant', async () => {
    const globexAccount = await registerPaybill()
    const r = await globex.post('/api/v1/payments/c2b/simulate', {
      shortcode: '600200',
      amount: 1200,
      phone_number: '+254112345602',
      account: `${globexAccount}#INV7`,
    })
    expect(r.status).toBe(202)
    const [transId] = await eventually(async () => {
      const ids = await transIds('254112345602')
      return ids.length ? ids : null
    })
    const [txn] = await eventually(
      async () => {
        const found = await transactionsOf(globex, transId!)
        return found.length && found[0]!.category ? found : null
      },
      15_000,
      'the paybill payment in globex analytics',
    )
    expect(txn).toMatchObject({ amount: 1200, category: 'Revenue' })
    expect(await transactionsOf(acme, transId!)).toEqual([])
    const hook = await eventually(
      () =>
        receiver.hits.find((h) => h.tenant === 'globex' && h.body.data?.receipt_number === transId),
      15_000,
      'the globex webhook',
    )
    expect(hook.verified).toBe(true)
    expect(hook.body.data).toMatchObject({ channel: 'c2b', account_reference: 'INV7' })
  }, 30_000)

  it('rejects an unknown account number at validation (C2B00012), so no confirmation is sent', async () => {
    await registerPaybill()
    await globex.post('/api/v1/payments/c2b/simulate', {
      shortcode: '600200',
      amount: 50,
      phone_number: '254712345603',
      account: '000000',
    })
    const [transId] = await eventually(async () => {
      const ids = await transIds('254712345603')
      return ids.length ? ids : null
    })
    const rec = await eventually(async () => {
      const r = (await sim().get(`/simulator/requests/${transId}`)).body
      return r.validation ? r : null
    })
    expect(rec).toMatchObject({ validation: 'C2B00012', confirmed: false })
  })

  it('records 10 copies of one confirmation as one transaction', async () => {
    // A till of its own whose URLs the simulator forgets (as if deleted on the M-Pesa portal), so
    // the payment is real at the provider and only this test sends its confirmation, ten times.
    const reg = await acme.post('/api/v1/payments/c2b/register', {
      shortcode: '600110',
      response_type: 'Completed',
    })
    expect(reg.status).toBe(201)
    expect(
      (await fetch(`${p.url('simulator')}/simulator/c2b/urls/600110`, { method: 'DELETE' })).status,
    ).toBe(200)
    expect(
      (
        await acme.post('/api/v1/payments/c2b/simulate', {
          shortcode: '600110',
          amount: 77,
          phone_number: '0712345604',
        })
      ).status,
    ).toBe(202)
    const [transId] = await eventually(async () => {
      const ids = await transIds('254712345604')
      return ids.length ? ids : null
    })
    const body = {
      TransactionType: 'Buy Goods',
      TransID: transId,
      TransTime: transTimeNow(),
      TransAmount: '77.00',
      BusinessShortCode: '600110',
      BillRefNumber: '',
      InvoiceNumber: '',
      OrgAccountBalance: '',
      ThirdPartyTransID: '',
      MSISDN: '2547 ***** 604',
      FirstName: 'JANE',
      MiddleName: '',
      LastName: 'DOE',
    }
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(reg.body.confirmation_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
    await eventually(async () => (await transactionsOf(acme, transId!)).length > 0, 15_000)
    // A later payment of the same tenant marks the point by which the copies were all applied.
    const mark = await payTill('0712345614', 1)
    await eventually(async () => (await transactionsOf(acme, mark)).length > 0, 15_000)
    expect(await transactionsOf(acme, transId!)).toHaveLength(1)
    expect(receiver.hits.filter((h) => h.body.data?.receipt_number === transId)).toHaveLength(1)
  }, 30_000)

  it('answers a forged confirmation 401 and records nothing', async () => {
    const till = await registerTill()
    const forged = {
      TransactionType: 'Buy Goods',
      TransID: 'TFORGED001',
      TransTime: transTimeNow(),
      TransAmount: '5000.00',
      BusinessShortCode: '600100',
      MSISDN: '2547 ***** 605',
    }
    const url = new URL(till.confirmation_url)
    const post = (u: string) =>
      fetch(u, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(forged),
      })
    const sig = url.searchParams.get('sig')!
    const wrongSig = `${url.origin}${url.pathname}?ref=600100&sig=${sig.replace(/^./, sig[0] === 'a' ? 'b' : 'a')}`
    const noSig = `${url.origin}${url.pathname}?ref=600100`
    const otherShortcode = `${url.origin}${url.pathname}?ref=600200&sig=${sig}`
    for (const u of [wrongSig, noSig, otherShortcode]) expect((await post(u)).status).toBe(401)
    // With the right token it is stored but, unknown to the provider, rejected: never money.
    expect((await post(till.confirmation_url)).status).toBe(200)
    const row = await eventually(async () => {
      const r = await acme.get('/api/v1/payments/c2b/payments/TFORGED001')
      return r.body.status === 'rejected' ? r.body : null
    }, 15_000)
    expect(row.counted).toBe(false)
    const mark = await payTill('0712345615', 1)
    await eventually(async () => (await transactionsOf(acme, mark)).length > 0, 15_000)
    expect(await transactionsOf(acme, 'TFORGED001')).toEqual([])
  }, 30_000)

  it('queries a receipt, reads the till balance and reverses a payment through the provider', async () => {
    const transId = await payTill('0712345610', 250)
    await eventually(async () => (await transactionsOf(acme, transId)).length > 0, 15_000)
    const status = await acme.post('/api/v1/payments/transaction-status', {
      transaction_id: transId,
    })
    expect(status.status).toBe(202)
    const done = await eventually(async () => {
      const r = await acme.get(`/api/v1/payments/transaction-status/${status.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(done).toMatchObject({
      status: 'completed',
      result: { ReceiptNo: transId, TransactionStatus: 'Completed' },
    })
    expect(
      (await globex.post('/api/v1/payments/transaction-status', { transaction_id: transId }))
        .status,
    ).toBe(404)

    const balance = await acme.post('/api/v1/payments/account-balance', { shortcode: '600100' })
    expect(balance.status).toBe(202)
    const b = await eventually(async () => {
      const r = await acme.get(`/api/v1/payments/account-balance/${balance.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(b.status).toBe('completed')
    expect(String(b.result.AccountBalance)).toMatch(/^Working Account\|KES\|\d+\.\d{2}/)
    expect(
      (await globex.post('/api/v1/payments/account-balance', { shortcode: '600100' })).status,
    ).toBe(404)

    const rev = await acme.post('/api/v1/payments/reversals', {
      transaction_id: transId,
      amount: 250,
    })
    expect(rev.status).toBe(202)
    const reversed = await eventually(async () => {
      const r = await acme.get(`/api/v1/payments/reversals/${rev.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(reversed).toMatchObject({
      status: 'completed',
      result: { OriginalTransactionID: transId },
    })
    const again = await acme.post('/api/v1/payments/reversals', {
      transaction_id: transId,
      amount: 250,
    })
    const twice = await eventually(async () => {
      const r = await acme.get(`/api/v1/payments/reversals/${again.body.id}`)
      return r.body.status !== 'pending' ? r.body : null
    })
    expect(twice).toMatchObject({ status: 'failed', result: { code: 'R000001' } })
  }, 30_000)

  it('simulates a customer paying the till from the CLI (mmp payments simulate-c2b)', async () => {
    await registerTill()
    const cli = Bun.spawn(
      [
        process.execPath,
        join(import.meta.dir, '..', 'cmd', 'main.ts'),
        'payments',
        'simulate-c2b',
        '--shortcode',
        '600100',
        '--amount',
        '30',
        '--phone',
        '0712 345 609',
        '--url',
        p.gateway,
      ],
      {
        env: {
          ...process.env,
          MMP_DATA_DIR: p.dataDir,
          MMP_OPERATOR_EMAIL: OPERATOR.email,
          MMP_OPERATOR_PASSWORD: OPERATOR.password,
        },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const out = await new Response(cli.stdout).text()
    expect(await cli.exited).toBe(0)
    expect(out).toContain('254712345609 pays KES 30 to 600100')
    const [transId] = await eventually(async () => {
      const ids = await transIds('254712345609')
      return ids.length ? ids : null
    })
    await eventually(async () => (await transactionsOf(acme, transId!)).length > 0, 15_000)
  }, 30_000)

  it("rejects validation for a suspended tenant's till with C2B00016", async () => {
    await createTenants(p.gateway, await p.login(), 'initech')
    const initech = await adminOf('initech')
    const reg = await initech.post('/api/v1/payments/c2b/register', {
      shortcode: '600150',
      response_type: 'Completed',
    })
    expect(reg.status).toBe(201)
    expect((await operator.post('/api/v1/tenants/initech/suspend')).status).toBe(200)
    const r = await fetch(reg.body.validation_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        TransactionType: 'Buy Goods',
        TransID: 'TVALID0001',
        TransAmount: '10.00',
        BusinessShortCode: '600150',
        MSISDN: '2547 ***** 606',
      }),
    })
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ ResultCode: 'C2B00016', ResultDesc: 'Rejected' })
  })
})
