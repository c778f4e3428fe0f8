import { Elysia } from 'elysia'
import {
  darajaError,
  eatTimestamp,
  type Outcome,
  outcomeOfCode,
  receiptNumber,
  requestId,
  type StkRecord,
} from './model.ts'
import {
  firstFailure,
  oneOf,
  phone,
  STK_TRANSACTION_TYPES,
  shortcode as shortcodeField,
  text,
  timestamp,
  url,
} from './rules.ts'
import { readDarajaRequest, type Sim } from './sim.ts'

export interface StkOptions {
  shortcode: string
  passkey: string
  outcomeOf: (phone: string) => Outcome
}

/**
 * Answers Daraja gives before it takes a push, asked for by the phone's last four digits
 * (docs/daraja.md). `processed`: the push went ahead all the same (its answer was lost on the
 * way back, as a 500 after processing is in production); `callback: false` — and its callback
 * is never sent either, so only the provider's own record (Pull Transactions) tells.
 */
const SYNC_ERRORS: Record<
  string,
  { code: string; message: string; processed: boolean; callback?: boolean }
> = {
  '5001': { code: '500.003.1001', message: 'Internal Server Error', processed: true },
  '5002': {
    code: '500.003.02',
    message: 'System is busy. Please try again in few minutes.',
    processed: false,
  },
  '5003': { code: '500.003.03', message: 'Quota Violation', processed: false },
  '5004': {
    code: '500.003.1001',
    message: 'Internal Server Error',
    processed: true,
    callback: false,
  },
}

const LOCKED =
  'Unable to lock subscriber, a transaction is already in process for the current subscriber'

/**
 * M-Pesa Express (STK push and its query) as production answers it: a wrong password or
 * shortcode is HTTP 500 `500.001.1001` "Wrong credentials" / "Merchant does not exist"; a second
 * push to a phone whose prompt is still open is `500.001.1001` "Unable to lock subscriber";
 * TransactionDesc is optional; an amount outside 1–250,000 is taken and ends with result code 2
 * or 3, and a BuyGoods push to the paybill (or a PartyB other than the shortcode) with 2028.
 */
export function stkRoutes(sim: Sim, o: StkOptions) {
  /** 500.001.1001 for a shortcode or password that is not the app's; null when both are right. */
  const credentialsError = (body: Record<string, unknown>) => {
    if (String(body.BusinessShortCode ?? '') !== o.shortcode)
      return darajaError(500, '500.001.1001', 'Merchant does not exist')
    const want = Buffer.from(o.shortcode + o.passkey + String(body.Timestamp ?? '')).toString(
      'base64',
    )
    return body.Password === want ? null : darajaError(500, '500.001.1001', 'Wrong credentials')
  }

  const checks = [
    timestamp(() => Date.now()),
    oneOf('TransactionType', STK_TRANSACTION_TYPES),
    phone('PartyA'),
    shortcodeField('PartyB'),
    phone('PhoneNumber'),
    url('CallBackURL'),
    text('AccountReference', 12),
    // Optional (the docs: "all fields apart from TransactionDesc are mandatory"), at most 13.
    (b: Record<string, unknown>) =>
      String(b.TransactionDesc ?? '').length <= 13
        ? null
        : darajaError(400, '400.002.02', 'Bad Request - Invalid TransactionDesc'),
    (b: Record<string, unknown>) => {
      const v = String(b.Amount ?? '')
      const n = Number(v)
      return v !== '' && Number.isFinite(n) && n >= 0
        ? null
        : darajaError(400, '400.002.02', 'Bad Request - Invalid Amount')
    },
  ]

  /** A prompt still open on the phone: its decision is not made yet. */
  const inFlight = (phoneNumber: string): boolean => {
    const last = sim.store.received(phoneNumber, 'stk').at(-1)
    const rec = last ? sim.store.recall('stk', last.id) : undefined
    return !!rec && rec.decideAt > Date.now()
  }

  /** What the push ends with: amount limits and product assignment first, then the phone's. */
  const outcomeOf = (body: Record<string, unknown>, phoneNumber: string): Outcome => {
    const amount = Number(body.Amount)
    if (amount < 1) return outcomeOfCode(2)
    if (amount > 250_000) return outcomeOfCode(3)
    if (body.TransactionType === 'CustomerBuyGoodsOnline' || String(body.PartyB) !== o.shortcode)
      return outcomeOfCode(2028)
    return o.outcomeOf(phoneNumber)
  }

  function accept(body: Record<string, unknown>, callback: boolean) {
    const phoneNumber = String(body.PhoneNumber)
    const checkoutRequestId = `ws_CO_${eatTimestamp(Date.now())}${Bun.randomUUIDv7().replaceAll('-', '').slice(-12)}`
    const outcome = outcomeOf(body, phoneNumber)
    const rec: StkRecord = {
      kind: 'stk',
      checkoutRequestId,
      merchantRequestId: requestId(),
      request: body,
      outcome: callback ? outcome : { ...outcome, callback: false },
      receipt: receiptNumber(),
      decideAt: Date.now() + sim.delayMs,
      callbackStatus: null,
      callbackError: null,
    }
    sim.store.remember(
      checkoutRequestId,
      rec,
      phoneNumber,
      rec.outcome.callback ? rec.decideAt : null,
    )
    if (rec.outcome.resultCode === 0) {
      sim.store.issueReceipt(rec.receipt, 'stk', checkoutRequestId, Number(body.Amount))
      sim.store.book({
        receipt: rec.receipt,
        shortcode: o.shortcode,
        msisdn: phoneNumber,
        billRef: String(body.AccountReference ?? ''),
        amountCents: Math.round(Number(body.Amount) * 100),
        completedAt: rec.decideAt,
      })
    }
    if (rec.outcome.callback) sim.schedule('stk', checkoutRequestId, sim.delayMs)
    return rec
  }

  const app = new Elysia({ name: 'mmp-simulator-stk' })
    .post('/mpesa/stkpush/v1/processrequest', async ({ request }) => {
      const body = await readDarajaRequest({ sim, input: { request } })
      if (body instanceof Response) return body
      const refused = credentialsError(body) ?? firstFailure(body, checks)
      if (refused) return refused
      const phoneNumber = String(body.PhoneNumber)
      if (inFlight(phoneNumber)) return darajaError(500, '500.001.1001', LOCKED)
      const sync = SYNC_ERRORS[phoneNumber.slice(-4)]
      if (sync) {
        if (sync.processed) accept(body, sync.callback ?? true)
        return darajaError(500, sync.code, sync.message)
      }
      const rec = accept(body, true)
      return {
        MerchantRequestID: rec.merchantRequestId,
        CheckoutRequestID: rec.checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      }
    })
    .post('/mpesa/stkpushquery/v1/query', async ({ request }) => {
      const body = await readDarajaRequest({ sim, input: { request } })
      if (body instanceof Response) return body
      const refused = credentialsError(body)
      if (refused) return refused
      const rec = sim.store.recall('stk', String(body.CheckoutRequestID ?? ''))
      if (!rec) return darajaError(400, '400.002.02', 'Bad Request - Invalid CheckoutRequestID')
      if (Date.now() < rec.decideAt)
        return darajaError(500, '500.001.1001', 'The transaction is being processed')
      return {
        ResponseCode: '0',
        ResponseDescription: 'The service request has been accepted successsfully',
        MerchantRequestID: rec.merchantRequestId,
        CheckoutRequestID: rec.checkoutRequestId,
        ResultCode: String(rec.outcome.resultCode),
        ResultDesc: rec.outcome.resultDesc,
      }
    })
  return app
}
