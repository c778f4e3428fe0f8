import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { Elysia } from 'elysia'
import { b2cResultOf, eatTimestamp, stkCallbackOf } from './callbacks.ts'
import {
  type B2cRecord,
  b2cOutcome,
  darajaError,
  MAX_RECORDS,
  type Outcome,
  outcomeForPhone,
  PHONE,
  receiptNumber,
  requestId,
  type SimulatorOptions,
  type StkRecord,
} from './model.ts'

export { type B2cRecord, type Outcome, outcomeForPhone, type SimulatorOptions, type StkRecord }

/**
 * The Daraja-compatible M-Pesa simulator (DESIGN §8, §11): the same HTTP protocol as Safaricom
 * Daraja (OAuth client credentials, STK push, STK push query, B2C) and callbacks shaped like
 * Daraja's. The outcome is chosen by the last four digits of the customer's phone number:
 *
 * | ending | STK push                                 | B2C                        |
 * |--------|------------------------------------------|----------------------------|
 * | 1032   | ResultCode 1032, cancelled by the user   | success                    |
 * | 1037   | ResultCode 1037, customer unreachable    | success                    |
 * | 0001   | ResultCode 1, insufficient balance       | ResultCode 1               |
 * | 2001   | ResultCode 2001, wrong PIN               | ResultCode 2001            |
 * | 9999   | success whose callback is never sent     | result never sent          |
 * | other  | ResultCode 0 with Amount, MpesaReceiptNumber, TransactionDate, PhoneNumber items |
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
 * request accepted for a phone, across restarts.
 */
export function createSimulator(opts: SimulatorOptions) {
  const key = opts.consumerKey ?? 'mmp-simulator-key'
  const secret = opts.consumerSecret ?? 'mmp-simulator-secret'
  const shortcode = opts.shortcode ?? '174379'
  const passkey = opts.passkey ?? 'mmp-simulator-passkey'
  const outcomeOf = opts.outcomeOf ?? outcomeForPhone
  const tokens = new Map<string, number>()
  const stk = new Map<string, StkRecord>()
  const b2c = new Map<string, B2cRecord>()
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let stopped = false

  if (opts.statePath) mkdirSync(dirname(opts.statePath), { recursive: true })
  const store = new Database(opts.statePath ?? ':memory:', { create: true })
  store.run('PRAGMA journal_mode = WAL')
  store.run('PRAGMA synchronous = NORMAL')
  store.run('PRAGMA busy_timeout = 5000')
  store.run(
    'CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, kind TEXT NOT NULL, record TEXT NOT NULL)',
  )
  store.run(
    'CREATE TABLE IF NOT EXISTS received (seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, id TEXT NOT NULL, phone TEXT NOT NULL, received_at INTEGER NOT NULL)',
  )
  store.run('CREATE INDEX IF NOT EXISTS received_phone ON received (phone, kind)')
  store.run(
    'CREATE TABLE IF NOT EXISTS pending_callbacks (id TEXT PRIMARY KEY, kind TEXT NOT NULL, due_at INTEGER NOT NULL)',
  )
  const save = store.query('INSERT OR REPLACE INTO requests (id, kind, record) VALUES (?, ?, ?)')
  const load = store.query<{ record: string }, [string, string]>(
    'SELECT record FROM requests WHERE id = ? AND kind = ?',
  )
  const receive = store.query(
    'INSERT INTO received (kind, id, phone, received_at) VALUES (?, ?, ?, ?)',
  )
  const due = store.query(
    'INSERT OR REPLACE INTO pending_callbacks (id, kind, due_at) VALUES (?, ?, ?)',
  )
  const done = store.query('DELETE FROM pending_callbacks WHERE id = ?')

  /**
   * Records an accepted request, counts it, and (when it will be called back) its pending callback,
   * in one commit before the answer goes out: a crash after answering still calls back.
   */
  const remember = <T extends StkRecord | B2cRecord>(
    map: Map<string, T>,
    id: string,
    rec: T,
    phone: string,
  ) => {
    map.set(id, rec)
    if (map.size > MAX_RECORDS) map.delete(map.keys().next().value as string)
    store.transaction(() => {
      save.run(id, rec.kind, JSON.stringify(rec))
      receive.run(rec.kind, id, phone, Date.now())
      if (rec.outcome.callback) due.run(id, rec.kind, rec.decideAt)
    })()
  }
  const recall = <T extends StkRecord | B2cRecord>(
    map: Map<string, T>,
    kind: T['kind'],
    id: string,
  ): T | undefined => {
    const hit = map.get(id)
    if (hit) return hit
    const row = load.get(id, kind)
    return row ? (JSON.parse(row.record) as T) : undefined
  }

  const bearerOk = (request: Request): boolean => {
    const m = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')
    const exp = m ? tokens.get(m[1]!) : undefined
    return exp !== undefined && exp > Date.now()
  }

  const later = (ms: number, fn: () => Promise<void>) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      // After stop the store is closed: a callback finishing then is simply left for the next start.
      fn().catch(() => {})
    }, ms)
    timers.add(timer)
  }

  /**
   * Delivers a callback. A 429 or 5xx answer or a network error is retried a few times with
   * backoff (honouring Retry-After up to 5 s), so a rate-limited gateway delays a callback instead
   * of losing it; reconciliation covers whatever still gets lost.
   */
  const post = async (
    url: string,
    body: unknown,
    rec: { callbackStatus: number | null; callbackError: string | null },
  ): Promise<boolean> => {
    for (let attempt = 0; attempt < 6; attempt++) {
      let wait = 100 * 2 ** attempt
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        })
        rec.callbackStatus = res.status
        rec.callbackError = null
        await res.arrayBuffer()
        if (res.status !== 429 && res.status < 500) return true
        const retryAfter = Number(res.headers.get('retry-after'))
        if (Number.isFinite(retryAfter) && retryAfter > 0) wait = Math.min(5000, retryAfter * 1000)
      } catch (err) {
        rec.callbackError = (err as Error).message
      }
      if (stopped) return false
      await Bun.sleep(wait)
    }
    return true
  }

  /** Calls back a remembered request after `ms`; its pending row goes once it was delivered. */
  const schedule = (kind: 'stk' | 'b2c', id: string, ms: number) =>
    later(ms, async () => {
      const rec = kind === 'stk' ? recall(stk, 'stk', id) : recall(b2c, 'b2c', id)
      if (!rec) {
        done.run(id)
        return
      }
      const { url, body } = rec.kind === 'stk' ? stkCallbackOf(rec) : b2cResultOf(rec)
      if (await post(url, body, rec)) done.run(id)
    })

  const readJson = async (request: Request): Promise<Record<string, unknown> | null> => {
    try {
      const v = await request.json()
      return v && typeof v === 'object' ? (v as Record<string, unknown>) : null
    } catch {
      return null
    }
  }

  const passwordOk = (body: Record<string, unknown>) =>
    String(body.BusinessShortCode ?? '') === shortcode &&
    body.Password ===
      Buffer.from(shortcode + passkey + String(body.Timestamp ?? '')).toString('base64')

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
      const m = /^Basic (.+)$/.exec(request.headers.get('authorization') ?? '')
      const given = m ? Buffer.from(m[1]!, 'base64').toString() : ''
      if (given !== `${key}:${secret}`)
        return darajaError(400, '400.008.01', 'Invalid Authentication passed')
      const token = receiptNumber() + receiptNumber() + receiptNumber()
      tokens.set(token, Date.now() + 3599_000)
      if (tokens.size > 10_000) tokens.delete(tokens.keys().next().value as string)
      return { access_token: token, expires_in: '3599' }
    })
    .post('/mpesa/stkpush/v1/processrequest', async ({ request }) => {
      if (!bearerOk(request)) return darajaError(401, '404.001.03', 'Invalid Access Token')
      const body = await readJson(request)
      if (!body) return darajaError(400, '400.002.05', 'Invalid Request Payload')
      if (!passwordOk(body)) return darajaError(400, '400.002.02', 'Bad Request - Invalid Password')
      const phone = String(body.PhoneNumber ?? '')
      if (!PHONE.test(phone))
        return darajaError(400, '400.002.02', 'Bad Request - Invalid PhoneNumber')
      const amount = Number(body.Amount)
      if (!Number.isInteger(amount) || amount < 1)
        return darajaError(400, '400.002.02', 'Bad Request - Invalid Amount')
      const callbackUrl = String(body.CallBackURL ?? '')
      if (!/^https?:\/\//.test(callbackUrl))
        return darajaError(400, '400.002.02', 'Bad Request - Invalid CallBackURL')
      if (String(body.AccountReference ?? '').length > 12)
        return darajaError(400, '400.002.02', 'Bad Request - Invalid AccountReference')
      const checkoutRequestId = `ws_CO_${eatTimestamp(Date.now())}${Bun.randomUUIDv7().replaceAll('-', '').slice(-12)}`
      const merchantRequestId = requestId()
      const rec: StkRecord = {
        kind: 'stk',
        checkoutRequestId,
        merchantRequestId,
        request: body,
        outcome: outcomeOf(phone),
        receipt: receiptNumber(),
        decideAt: Date.now() + opts.delayMs,
        callbackStatus: null,
        callbackError: null,
      }
      remember(stk, checkoutRequestId, rec, phone)
      if (rec.outcome.callback) schedule('stk', checkoutRequestId, opts.delayMs)
      return {
        MerchantRequestID: merchantRequestId,
        CheckoutRequestID: checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      }
    })
    .post('/mpesa/stkpushquery/v1/query', async ({ request }) => {
      if (!bearerOk(request)) return darajaError(401, '404.001.03', 'Invalid Access Token')
      const body = await readJson(request)
      if (!body) return darajaError(400, '400.002.05', 'Invalid Request Payload')
      if (!passwordOk(body)) return darajaError(400, '400.002.02', 'Bad Request - Invalid Password')
      const rec = recall(stk, 'stk', String(body.CheckoutRequestID ?? ''))
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
    .post('/mpesa/b2c/:version/paymentrequest', async ({ request, params }) => {
      if (params.version !== 'v1' && params.version !== 'v3')
        return darajaError(404, '404.001.01', 'Resource not found')
      if (!bearerOk(request)) return darajaError(401, '404.001.03', 'Invalid Access Token')
      const body = await readJson(request)
      if (!body) return darajaError(400, '400.002.05', 'Invalid Request Payload')
      const phone = String(body.PartyB ?? '')
      if (!PHONE.test(phone)) return darajaError(400, '400.002.02', 'Bad Request - Invalid PartyB')
      const amount = Number(body.Amount)
      if (!Number.isInteger(amount) || amount < 1)
        return darajaError(400, '400.002.02', 'Bad Request - Invalid Amount')
      const resultUrl = String(body.ResultURL ?? '')
      if (!/^https?:\/\//.test(resultUrl))
        return darajaError(400, '400.002.02', 'Bad Request - Invalid ResultURL')
      if (!body.InitiatorName || !body.SecurityCredential)
        return darajaError(400, '400.002.02', 'Bad Request - Invalid Initiator')
      const originatorConversationId = String(body.OriginatorConversationID ?? requestId())
      const conversationId = `AG_${eatTimestamp(Date.now()).slice(0, 8)}_${Bun.randomUUIDv7().replaceAll('-', '').slice(-20)}`
      const outcome = opts.outcomeOf ? opts.outcomeOf(phone) : b2cOutcome(phone)
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
      remember(b2c, conversationId, rec, phone)
      if (outcome.callback) schedule('b2c', conversationId, opts.delayMs)
      return {
        ConversationID: conversationId,
        OriginatorConversationID: originatorConversationId,
        ResponseCode: '0',
        ResponseDescription: 'Accept the service request successfully.',
      }
    })
    .get('/simulator/requests/:id', ({ params }) => {
      const rec = recall(stk, 'stk', params.id) ?? recall(b2c, 'b2c', params.id)
      if (!rec) return darajaError(404, '404.001.01', 'Resource not found')
      return rec
    })
    .get('/simulator/received', ({ query }) => {
      const rows = store
        .query<{ kind: string; id: string; phone: string; received_at: number }, [string, string]>(
          `SELECT kind, id, phone, received_at FROM received
           WHERE (?1 = '' OR phone = ?1) AND (?2 = '' OR kind = ?2) ORDER BY seq`,
        )
        .all(String(query.phone ?? ''), String(query.kind ?? ''))
      return { count: rows.length, requests: rows }
    })
    .get('/simulator/requests', () => ({
      stk: [...stk.values()].slice(-100),
      b2c: [...b2c.values()].slice(-100),
    }))
    .onStart(() => {
      // Callbacks a previous process accepted but did not deliver: Daraja would still send them.
      const now = Date.now()
      for (const row of store
        .query<{ id: string; kind: 'stk' | 'b2c'; due_at: number }, []>(
          'SELECT id, kind, due_at FROM pending_callbacks ORDER BY due_at',
        )
        .all())
        schedule(row.kind, row.id, Math.max(0, row.due_at - now))
    })
    .onStop(() => {
      stopped = true
      for (const t of timers) clearTimeout(t)
      timers.clear()
      store.close()
    })
  return app
}
