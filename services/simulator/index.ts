import { Elysia } from 'elysia'
import { businessRoutes } from './business.ts'
import { c2bRoutes } from './c2b.ts'
import { b2cResultOf, eatTimestamp, stkCallbackOf } from './callbacks.ts'
import { createDelivery } from './delivery.ts'
import {
  type B2cRecord,
  b2cOutcome,
  darajaError,
  type Outcome,
  outcomeForPhone,
  receiptNumber,
  requestId,
  type SimulatorOptions,
  type StkRecord,
} from './model.ts'
import { withDarajaErrors } from './not-found.ts'
import { pullRoutes } from './pull.ts'
import {
  B2C_COMMANDS,
  firstFailure,
  oneOf,
  phone,
  present,
  readJsonBody,
  shortcode as shortcodeField,
  text,
  url,
  wholeAmount,
} from './rules.ts'
import type { Sim } from './sim.ts'
import { stkRoutes } from './stk.ts'
import { createStore, type Kind } from './store.ts'
import { duplicateOriginator } from './strict.ts'

export { type B2cRecord, type Outcome, outcomeForPhone, type SimulatorOptions, type StkRecord }

/**
 * The Daraja-compatible M-Pesa simulator (DESIGN §8, §11): the same HTTP protocol as Safaricom
 * Daraja (OAuth client credentials, STK push, STK push query, B2C, C2B register URL and simulate,
 * Transaction Status, Account Balance, Reversal) and callbacks shaped like Daraja's. Requests are
 * checked as Daraja documents them (rules.ts) and refused with its error bodies; auth schemes are
 * case-insensitive. STK push and OAuth answer as production does (stk.ts); Pull Transactions
 * lists the payments it completed (pull.ts). The outcome is chosen by the last four digits of the
 * customer's phone number: for STK push every documented result code and the errors Daraja gives
 * before it takes a push (model.ts `outcomeForPhone`, stk.ts; the table is in docs/daraja.md);
 * for B2C 0001 → ResultCode 1, 2001 → 2001, 9999 → no result ever, anything else success.
 *
 * Until `delayMs` has passed the STK query answers Daraja's "still processing" error; after it
 * the query reports the final result, including for 9999 (so reconciliation settles it as a
 * success with no receipt number).
 *
 * Like Daraja, an accepted request is called back even when the process dies in between: the
 * request and its pending callback are committed before the answer is sent, and on start the
 * simulator fires every callback still due (with `statePath`; in memory only without it).
 *
 * Test helpers (not part of Daraja): `GET /simulator/requests/{CheckoutRequestID}` shows what the
 * simulator received (including the CallBackURL) and what it decided; `GET /simulator/requests`
 * lists the recent ones; `GET /simulator/received?phone=&kind=` counts every STK push and B2C
 * request accepted for a phone, across restarts; `POST /simulator/faults`
 * `{"transaction_status": n}` answers the next n Transaction Status requests HTTP 503.
 */
export function createSimulator(opts: SimulatorOptions) {
  const key = opts.consumerKey ?? 'mmp-simulator-key'
  const secret = opts.consumerSecret ?? 'mmp-simulator-secret'
  const shortcode = opts.shortcode ?? '174379'
  const passkey = opts.passkey ?? 'mmp-simulator-passkey'
  const outcomeOf = opts.outcomeOf ?? outcomeForPhone
  // Daraja: "each request invalidates the previous token" — one live token per app.
  let live: { token: string; expiresAt: number } | null = null
  const store = createStore(opts.statePath)
  const delivery = createDelivery()

  const tokenRefused = (request: Request): Response | null => {
    const m = /^bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
    const ok = !!m && !!live && m[1] === live.token && live.expiresAt > Date.now()
    return ok ? null : darajaError(404, '404.001.03', 'Invalid Access Token')
  }

  const fire: Partial<Record<Kind, (id: string) => Promise<boolean>>> = {
    async stk(id) {
      const rec = store.recall('stk', id)
      if (!rec) return true
      const { url: to, body } = stkCallbackOf(rec)
      return delivery.post(to, body, rec)
    },
    async b2c(id) {
      const rec = store.recall('b2c', id)
      if (!rec) return true
      const { url: to, body } = b2cResultOf(rec)
      return delivery.post(to, body, rec)
    },
  }
  const sim: Sim = {
    store,
    delivery,
    delayMs: opts.delayMs,
    production: opts.production ?? false,
    faults: { status: 0 },
    tokenRefused,
    schedule: (kind, id, ms) =>
      delivery.later(ms, async () => {
        if (await (fire[kind]?.(id) ?? Promise.resolve(true))) store.done(id)
      }),
  }
  const c2b = c2bRoutes(sim)
  const business = businessRoutes(sim)
  fire.c2b = c2b.fire
  fire.status = (id) => business.fire('status', id)
  fire.balance = (id) => business.fire('balance', id)
  fire.reversal = (id) => business.fire('reversal', id)

  const b2cChecks = [
    present('InitiatorName'),
    present('SecurityCredential'),
    oneOf('CommandID', B2C_COMMANDS),
    wholeAmount('Amount'),
    shortcodeField('PartyA'),
    phone('PartyB'),
    text('Remarks', 100, 2),
    url('QueueTimeOutURL'),
    url('ResultURL'),
  ]

  const app = new Elysia({ name: 'mmp-simulator' })
    .get('/health', () => ({
      service: 'simulator',
      version: opts.version,
      status: 'ok',
      checks: {},
    }))
    .get('/oauth/v1/generate', ({ request, query }) => {
      if (query.grant_type !== 'client_credentials')
        return darajaError(400, '400.008.02', 'Invalid grant type passed')
      const m = /^basic\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')
      const given = m ? Buffer.from(m[1]!, 'base64').toString() : ''
      if (given !== `${key}:${secret}`)
        return darajaError(400, '400.008.01', 'Invalid Authentication passed')
      const token = receiptNumber() + receiptNumber() + receiptNumber()
      live = { token, expiresAt: Date.now() + 3599_000 }
      return { access_token: token, expires_in: '3599' }
    })
    .use(stkRoutes(sim, { shortcode, passkey, outcomeOf }))
    .use(pullRoutes(sim, shortcode))
    .post('/mpesa/b2c/:version/paymentrequest', async ({ request, params }) => {
      if (params.version !== 'v1' && params.version !== 'v3')
        return darajaError(404, '404.001.01', 'Resource not found')
      const denied = tokenRefused(request)
      if (denied) return denied
      const body = await readJsonBody(request)
      if (body instanceof Response) return body
      const refused = firstFailure(body, b2cChecks)
      if (refused) return refused
      const phoneNumber = String(body.PartyB)
      const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
      const conversationId = `AG_${eatTimestamp(Date.now()).slice(0, 8)}_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}`
      // Daraja refuses an OriginatorConversationID it saw before, and does not pay it again.
      if (!store.claimOriginator(originatorConversationId, 'b2c', conversationId))
        return duplicateOriginator()
      const outcome = opts.outcomeOf ? opts.outcomeOf(phoneNumber) : b2cOutcome(phoneNumber)
      const rec: B2cRecord = {
        kind: 'b2c',
        conversationId,
        originatorConversationId,
        request: body,
        outcome,
        receipt: receiptNumber(),
        decideAt: Date.now() + opts.delayMs,
        callbackStatus: null,
        callbackError: null,
      }
      store.remember(conversationId, rec, phoneNumber, outcome.callback ? rec.decideAt : null)
      if (outcome.resultCode === 0)
        store.issueReceipt(rec.receipt, 'b2c', conversationId, Number(body.Amount))
      if (outcome.callback) sim.schedule('b2c', conversationId, opts.delayMs)
      return {
        ConversationID: conversationId,
        OriginatorConversationID: originatorConversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      }
    })
    .use(c2b.app)
    .use(business.app)
    .get('/simulator/requests/:id', ({ params }) => {
      for (const kind of ['stk', 'b2c', 'c2b', 'status', 'balance', 'reversal'] as const) {
        const rec = store.recall(kind, params.id)
        if (rec) return rec
      }
      return darajaError(404, '404.001.01', 'Resource not found')
    })
    .get('/simulator/received', ({ query }) => {
      const rows = store.received(String(query.phone ?? ''), String(query.kind ?? ''))
      return { count: rows.length, requests: rows }
    })
    // Test switch: `{"transaction_status": n}` answers the next n Transaction Status 503.
    .post('/simulator/faults', async ({ request }) => {
      const body = await readJsonBody(request)
      if (body instanceof Response) return body
      const n = Number(body.transaction_status ?? 0)
      sim.faults.status = Number.isInteger(n) && n >= 0 ? n : 0
      return { transaction_status: sim.faults.status }
    })
    .get('/simulator/requests', () => ({
      stk: store.recent('stk'),
      b2c: store.recent('b2c'),
      c2b: store.recent('c2b'),
    }))
    .onStart(() => {
      // Callbacks a previous process accepted but did not deliver: Daraja would still send them.
      const now = Date.now()
      for (const row of store.pending())
        sim.schedule(row.kind, row.id, Math.max(0, row.due_at - now))
    })
    .onStop(() => {
      delivery.stop()
      store.close()
    })
  return withDarajaErrors(app)
}
