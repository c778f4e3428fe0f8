import { createDarajaTransport, type DarajaConfig, ProviderError } from './daraja-transport.ts'

export { type DarajaConfig, ProviderError }

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
  const { authed, unwrap } = createDarajaTransport(cfg)

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
        if (
          err instanceof ProviderError &&
          err.errorCode === '500.001.1001' &&
          /being processed/i.test(err.message)
        )
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
