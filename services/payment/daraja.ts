import pRetry, { AbortError } from 'p-retry'
import { httpRequest, NetworkError } from './http.ts'

/**
 * The one provider adapter: Safaricom Daraja's HTTP protocol, pointed at the built-in simulator
 * or at Daraja by configuration (DESIGN §8).
 *
 * - OAuth: `GET /oauth/v1/generate?grant_type=client_credentials` with HTTP Basic
 *   consumer_key:consumer_secret → `{access_token, expires_in: "3599"}`; cached until shortly
 *   before it expires.
 * - STK push: `POST /mpesa/stkpush/v1/processrequest` → `{MerchantRequestID, CheckoutRequestID,
 *   ResponseCode: "0", ResponseDescription, CustomerMessage}`.
 * - STK query: `POST /mpesa/stkpushquery/v1/query` → `{ResponseCode, ResponseDescription,
 *   MerchantRequestID, CheckoutRequestID, ResultCode, ResultDesc}`; while the customer has not
 *   answered, HTTP 500 `{requestId, errorCode: "500.001.1001", errorMessage: "The transaction is
 *   being processed"}`.
 * - B2C: `POST /mpesa/b2c/v3/paymentrequest` → `{ConversationID, OriginatorConversationID,
 *   ResponseCode: "0", ResponseDescription}`.
 * Errors come as `{requestId, errorCode, errorMessage}`.
 *
 * Calls are retried with backoff on network errors and 5xx only.
 */
export interface DarajaConfig {
  baseUrl: string
  consumerKey: string
  consumerSecret: string
  shortcode: string
  passkey: string
  initiatorName: string
  securityCredential: string
  /** Retries after the first attempt (network errors and 5xx). */
  retries?: number
  minTimeoutMs?: number
  timeoutMs?: number
}

export interface StkPushInput {
  phoneNumber: string
  amount: number
  accountReference: string
  transactionDesc: string
  callbackUrl: string
}

export interface StkPushAccepted {
  MerchantRequestID: string
  CheckoutRequestID: string
  ResponseCode: string
  ResponseDescription: string
  CustomerMessage?: string
}

export type StkQueryResult =
  | { state: 'processing' }
  | { state: 'final'; resultCode: number; resultDesc: string }

export interface B2CInput {
  originatorConversationId: string
  phoneNumber: string
  amount: number
  remarks: string
  occasion: string
  resultUrl: string
  timeoutUrl: string
  commandId?: 'BusinessPayment' | 'SalaryPayment' | 'PromotionPayment'
}

export interface B2CAccepted {
  ConversationID: string
  OriginatorConversationID: string
  ResponseCode: string
  ResponseDescription: string
}

/**
 * A provider answer that is not a success; `status` is the HTTP status (0: no answer). `reached`
 * is false only when the provider certainly did not act on the request: the connection was never
 * made, or it answered a refusal (4xx, 503 Service Unavailable, or a non-zero ResponseCode). A
 * timeout, a reset after sending or another 5xx may have reached it.
 */
export class ProviderError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string | null,
    message: string,
    readonly reached = status === 0 || (status >= 500 && status !== 503),
  ) {
    super(message)
    this.name = 'ProviderError'
  }
}

/** Daraja's timestamp: YYYYMMDDHHmmss in East Africa Time (UTC+3, no daylight saving). */
export function darajaTimestamp(at: Date): string {
  const eat = new Date(at.getTime() + 3 * 3600_000)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${eat.getUTCFullYear()}${p(eat.getUTCMonth() + 1)}${p(eat.getUTCDate())}${p(eat.getUTCHours())}${p(eat.getUTCMinutes())}${p(eat.getUTCSeconds())}`
}

/** The inverse of `darajaTimestamp`; null when the value is not 14 digits. */
export function parseDarajaTimestamp(value: unknown): Date | null {
  const s = String(value ?? '')
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(s)
  if (!m) return null
  const [, y, mo, d, h, mi, se] = m.map(Number) as number[]
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, se!) - 3 * 3600_000
  return Number.isNaN(ms) ? null : new Date(ms)
}

/** STK push password: base64(shortcode + passkey + timestamp). */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(shortcode + passkey + timestamp).toString('base64')
}

export interface Daraja {
  stkPush(input: StkPushInput): Promise<StkPushAccepted>
  stkQuery(checkoutRequestId: string): Promise<StkQueryResult>
  b2c(input: B2CInput): Promise<B2CAccepted>
}

export function createDaraja(cfg: DarajaConfig, now: () => Date = () => new Date()): Daraja {
  const base = cfg.baseUrl.replace(/\/+$/, '')
  let token: { value: string; expiresAt: number } | null = null
  let tokenPending: Promise<string> | null = null

  /**
   * Queries and the token are safe to repeat; a push or a B2C request is retried only when the
   * previous attempt certainly did not reach the provider, or one key would prompt twice.
   */
  const retry = <T>(fn: () => Promise<T>, repeatable = true) =>
    pRetry(fn, {
      shouldRetry: ({ error }) => repeatable || !(error instanceof ProviderError && error.reached),
      retries: cfg.retries ?? 3,
      minTimeout: cfg.minTimeoutMs ?? 200,
      maxTimeout: 2000,
      factor: 2,
      randomize: true,
    })

  /** One HTTP call; 4xx and provider-declared outcomes abort the retry loop. */
  const call = async (
    path: string,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<Record<string, unknown>> => {
    let res: { status: number; text: string }
    try {
      res = await httpRequest(base + path, { ...init, timeoutMs: cfg.timeoutMs ?? 10_000 })
    } catch (err) {
      const sent = err instanceof NetworkError ? err.sent : true
      throw new ProviderError(0, null, `provider unreachable: ${(err as Error).message}`, sent)
    }
    const text = res.text
    let body: Record<string, unknown> = {}
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
    } catch {
      body = { errorMessage: text.slice(0, 200) }
    }
    if (res.status >= 200 && res.status < 300) return body
    const e = new ProviderError(
      res.status,
      typeof body.errorCode === 'string' ? body.errorCode : null,
      String(body.errorMessage ?? body.ResponseDescription ?? `HTTP ${res.status}`),
    )
    // The STK query's "still processing" is a 500 that is an answer, not a failure.
    if (res.status < 500 || e.errorCode === '500.001.1001') throw new AbortError(e)
    throw e
  }

  const fetchToken = async (): Promise<string> => {
    const basic = Buffer.from(`${cfg.consumerKey}:${cfg.consumerSecret}`).toString('base64')
    const body = await retry(() =>
      call('/oauth/v1/generate?grant_type=client_credentials', {
        method: 'GET',
        headers: { authorization: `Basic ${basic}` },
      }),
    )
    const value = String(body.access_token ?? '')
    if (!value) throw new ProviderError(502, null, 'the provider returned no access token')
    const ttl = Number(body.expires_in ?? 3599)
    // Renew a minute early (or halfway for short lifetimes).
    const margin = Math.min(60, ttl / 2)
    token = { value, expiresAt: Date.now() + (ttl - margin) * 1000 }
    return value
  }

  const accessToken = async (): Promise<string> => {
    if (token && token.expiresAt > Date.now()) return token.value
    tokenPending ??= fetchToken().finally(() => {
      tokenPending = null
    })
    return tokenPending
  }

  const authed = async (path: string, payload: unknown, repeatable = true) => {
    return retry(async () => {
      let bearer: string
      try {
        bearer = await accessToken()
      } catch (err) {
        // Without a token the request itself was never sent.
        const e = (err as { originalError?: unknown }).originalError ?? err
        const unsent = new ProviderError(
          e instanceof ProviderError ? e.status : 0,
          e instanceof ProviderError ? e.errorCode : null,
          (e as Error).message,
          false,
        )
        throw err instanceof AbortError ? new AbortError(unsent) : unsent
      }
      try {
        return await call(path, {
          method: 'POST',
          headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify(payload),
        })
      } catch (err) {
        // An expired or revoked token: drop it and let the next attempt fetch another.
        const inner = err instanceof AbortError ? (err as { originalError?: unknown }) : null
        const pe = (inner?.originalError ?? err) as ProviderError
        if (pe instanceof ProviderError && (pe.status === 401 || pe.errorCode === '404.001.03')) {
          token = null
          throw pe
        }
        throw err
      }
    }, repeatable)
  }

  const unwrap = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await p
    } catch (err) {
      const inner = (err as { originalError?: unknown }).originalError
      throw inner instanceof ProviderError ? inner : err
    }
  }

  return {
    async stkPush(input) {
      const ts = darajaTimestamp(now())
      const body = await unwrap(
        authed(
          '/mpesa/stkpush/v1/processrequest',
          {
            BusinessShortCode: cfg.shortcode,
            Password: stkPassword(cfg.shortcode, cfg.passkey, ts),
            Timestamp: ts,
            TransactionType: 'CustomerPayBillOnline',
            Amount: input.amount,
            PartyA: input.phoneNumber,
            PartyB: cfg.shortcode,
            PhoneNumber: input.phoneNumber,
            CallBackURL: input.callbackUrl,
            AccountReference: input.accountReference,
            TransactionDesc: input.transactionDesc,
          },
          false,
        ),
      )
      const code = body.ResponseCode
      if ((code !== undefined && String(code) !== '0') || !body.CheckoutRequestID) {
        throw new ProviderError(
          200,
          String(body.ResponseCode ?? ''),
          String(body.ResponseDescription ?? 'the provider refused the request'),
        )
      }
      return body as unknown as StkPushAccepted
    },

    async stkQuery(checkoutRequestId) {
      const ts = darajaTimestamp(now())
      try {
        const body = await unwrap(
          authed('/mpesa/stkpushquery/v1/query', {
            BusinessShortCode: cfg.shortcode,
            Password: stkPassword(cfg.shortcode, cfg.passkey, ts),
            Timestamp: ts,
            CheckoutRequestID: checkoutRequestId,
          }),
        )
        if (body.ResultCode === undefined || body.ResultCode === null || body.ResultCode === '')
          return { state: 'processing' }
        return {
          state: 'final',
          resultCode: Number(body.ResultCode),
          resultDesc: String(body.ResultDesc ?? ''),
        }
      } catch (err) {
        if (err instanceof ProviderError && err.errorCode === '500.001.1001')
          return { state: 'processing' }
        throw err
      }
    },

    async b2c(input) {
      const body = await unwrap(
        authed(
          '/mpesa/b2c/v3/paymentrequest',
          {
            OriginatorConversationID: input.originatorConversationId,
            InitiatorName: cfg.initiatorName,
            SecurityCredential: cfg.securityCredential,
            CommandID: input.commandId ?? 'BusinessPayment',
            Amount: input.amount,
            PartyA: cfg.shortcode,
            PartyB: input.phoneNumber,
            Remarks: input.remarks,
            QueueTimeOutURL: input.timeoutUrl,
            ResultURL: input.resultUrl,
            Occassion: input.occasion,
          },
          false,
        ),
      )
      if (
        (body.ResponseCode !== undefined && String(body.ResponseCode) !== '0') ||
        !body.ConversationID
      ) {
        throw new ProviderError(
          200,
          String(body.ResponseCode ?? ''),
          String(body.ResponseDescription ?? 'the provider refused the request'),
        )
      }
      return body as unknown as B2CAccepted
    },
  }
}
