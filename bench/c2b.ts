/**
 * C2B benchmark (`bun bench/c2b.ts`): sustained C2B confirmations per second through the gateway's
 * public callback route (each one authenticated by its URL token, recorded once per TransID with
 * its audit row and its success event in one commit), target ≥ 1,000/s; beside it, as the
 * reference measured in the same run, the same number of STK success callbacks through the
 * gateway (each confirmed with an STK query before it settles).
 */
import { eatTimestamp } from '../services/simulator/model.ts'
import { startTestPlatform } from '../test/support/platform.ts'
import { createTenants } from '../test/support/tenants.ts'
import { sized } from './support.ts'

const COUNT = Number(process.env.BENCH_COUNT ?? sized(2000, 50))
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const TARGET = 1000

const p = await startTestPlatform({
  only: 'gateway,auth,tenant,payment,simulator,broker',
  env: {
    MMP_SIMULATOR_DELAY_MS: '0',
    MMP_RATE_LIMIT_FREE: '1000000',
    MMP_RATE_LIMIT_IP: '1000000',
    MMP_RECONCILE_AFTER: '86400',
    MMP_LOG_LEVEL: 'warn',
  },
})

/** Runs `count` calls of `one(i)` at the benchmark's concurrency; calls per second. */
async function rate(count: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++)
    }),
  )
  return count / ((performance.now() - t0) / 1000)
}

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  await res.arrayBuffer()
}

try {
  const operator = await p.login()
  await createTenants(p.gateway, operator, 'bench')
  const admin = await p.login('owner@bench.test', 'bench-Owner-Passphrase-42')
  const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
  const reg = await fetch(`${p.gateway}/api/v1/payments/c2b/register`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ shortcode: '600900', response_type: 'Completed' }),
  })
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${await reg.text()}`)
  const { confirmation_url } = (await reg.json()) as { confirmation_url: string }

  // The reference's payments: pushed first, never called back by the simulator (phone ending 9999).
  const callbackUrls: string[] = []
  await rate(COUNT, async (i) => {
    const res = await fetch(`${p.gateway}/api/v1/payments/stkpush`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        phone_number: `2547${String(i % 10000).padStart(4, '0')}9999`,
        amount: 100,
        account_reference: 'BENCH',
        transaction_desc: 'bench',
      }),
    })
    const { checkout_request_id: id } = (await res.json()) as { checkout_request_id: string }
    const rec = (await (await fetch(`${p.url('simulator')}/simulator/requests/${id}`)).json()) as {
      request: { CallBackURL: string }
      merchantRequestId: string
    }
    callbackUrls[i] = `${rec.request.CallBackURL}|${id}|${rec.merchantRequestId}`
  })

  const confirmation = (i: number) => ({
    TransactionType: 'Buy Goods',
    TransID: `B${String(i).padStart(9, '0')}`,
    TransTime: eatTimestamp(Date.now()),
    TransAmount: '100.00',
    BusinessShortCode: '600900',
    BillRefNumber: '',
    InvoiceNumber: '',
    OrgAccountBalance: '',
    ThirdPartyTransID: '',
    MSISDN: '2547 ***** 678',
    FirstName: 'BENCH',
    MiddleName: '',
    LastName: 'PAYER',
  })
  await rate(200, (i) => post(confirmation_url, confirmation(COUNT + i))) // warm up
  const c2b = await rate(COUNT, (i) => post(confirmation_url, confirmation(i)))
  const stk = await rate(COUNT, (i) => {
    const [url, checkoutId, merchantId] = callbackUrls[i]!.split('|') as [string, string, string]
    return post(url, {
      Body: {
        stkCallback: {
          MerchantRequestID: merchantId,
          CheckoutRequestID: checkoutId,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 100 },
              { Name: 'MpesaReceiptNumber', Value: `S${String(i).padStart(9, '0')}` },
              { Name: 'TransactionDate', Value: 20250101120000 },
              { Name: 'PhoneNumber', Value: 254712345678 },
            ],
          },
        },
      },
    })
  })
  console.log(
    `C2B confirmations through the gateway's callback route, ${COUNT} at concurrency ${CONCURRENCY}: ` +
      `${c2b.toFixed(0)}/s (target ≥ ${TARGET}/s: ${c2b >= TARGET ? 'met' : 'NOT met'}); ` +
      `reference, the same number of STK success callbacks (each confirmed by an STK query): ` +
      `${stk.toFixed(0)}/s (ratio ${(c2b / stk).toFixed(2)})`,
  )
} finally {
  await p.dispose()
}
