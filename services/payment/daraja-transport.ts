import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import pRetry, { AbortError } from 'p-retry'
import { httpRequest, NetworkError } from './http.ts'

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

/**
 * Daraja's answers that say it did not take the request (docs: M-Pesa Express error codes):
 * HTTP 500 `500.001.1001` "Wrong credentials", "Merchant does not exist", "Unable to lock
 * subscriber"; `500.003.02` "System is busy" / "Spike Arrest Violation"; `500.003.03` "Quota
 * Violation". `credentials`: the platform's own settings are wrong (the operator must act).
 */
export type Refusal = 'credentials' | 'locked' | 'busy'

export function refusalOf(err: unknown): Refusal | null {
  if (!(err instanceof ProviderError)) return null
  const msg = err.message.toLowerCase()
  if (err.errorCode === '500.001.1001') {
    if (msg.includes('wrong credentials') || msg.includes('merchant does not exist'))
      return 'credentials'
    if (msg.includes('unable to lock subscriber')) return 'locked'
    return null
  }
  if (err.errorCode === '500.003.02' || err.errorCode === '500.003.03') return 'busy'
  // OAuth refused the consumer key and secret.
  if (msg.startsWith('oauth:') && (err.status === 400 || err.status === 401)) return 'credentials'
  return null
}

/**
 * One OAuth token per app (base URL and consumer key) in this process: Daraja invalidates the
 * previous token each time a new one is generated, so every client of the same app shares it.
 */
type Token = { value: string; expiresAt: number }
const tokens = new Map<string, Token | null>()
const pendingTokens = new Map<string, Promise<string>>()

/**
 * Where the processes of one install (`mmp serve --workers N`) share the token too: without it
 * each worker's new token invalidates its siblings' and they take turns being refused. A file
 * (0600) holding each app's current token by a hash of the app; null: this process only.
 */
let tokenFile: string | null = null
export function shareTokensThrough(path: string | null): void {
  tokenFile = path
}

/** Tokens the provider refused: never taken again from the shared file. */
const refusedTokens = new Set<string>()

const appKey = (app: string) => createHash('sha256').update(app).digest('hex').slice(0, 32)

function readShared(app: string): Token | null {
  if (!tokenFile) return null
  try {
    const all = JSON.parse(readFileSync(tokenFile, 'utf8')) as Record<string, Token>
    const t = all[appKey(app)]
    return t &&
      typeof t.value === 'string' &&
      t.expiresAt > Date.now() &&
      !refusedTokens.has(t.value)
      ? t
      : null
  } catch {
    return null
  }
}

function writeShared(app: string, t: Token): void {
  if (!tokenFile) return
  try {
    let all: Record<string, Token> = {}
    try {
      all = JSON.parse(readFileSync(tokenFile, 'utf8'))
    } catch {}
    all[appKey(app)] = t
    mkdirSync(dirname(tokenFile), { recursive: true, mode: 0o700 })
    const tmp = `${tokenFile}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(all), { mode: 0o600 })
    renameSync(tmp, tokenFile)
  } catch {
    // Sharing is an optimisation: each process still renews its own token when refused.
  }
}

/** What the transport needs of a Daraja app: where it is and its keys (and retry tuning). */
type TransportConfig = Pick<
  DarajaConfig,
  'baseUrl' | 'consumerKey' | 'consumerSecret' | 'retries' | 'minTimeoutMs' | 'timeoutMs'
>

/** The app a token belongs to: base URL, consumer key and (hashed) secret. */
const appOf = (cfg: Pick<DarajaConfig, 'baseUrl' | 'consumerKey' | 'consumerSecret'>) =>
  `${cfg.baseUrl.replace(/\/+$/, '')}|${cfg.consumerKey}|${createHash('sha256').update(cfg.consumerSecret).digest('hex').slice(0, 16)}`

/** The app's live token as the payment clients hold it (this process, else the shared file); null: none. */
export function liveToken(
  cfg: Pick<DarajaConfig, 'baseUrl' | 'consumerKey' | 'consumerSecret'>,
): string | null {
  const app = appOf(cfg)
  const mine = tokens.get(app)
  const t = mine && mine.expiresAt > Date.now() ? mine : readShared(app)
  return t && !refusedTokens.has(t.value) ? t.value : null
}

/**
 * OAuth token cache, retries and error mapping shared by every Daraja call: `authed` POSTs a JSON
 * body with a bearer token; `unwrap` turns a retry wrapper's error back into the ProviderError.
 */
export function createDarajaTransport(cfg: TransportConfig) {
  const base = cfg.baseUrl.replace(/\/+$/, '')
  const app = appOf(cfg)

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
    const errorCode = typeof body.errorCode === 'string' ? body.errorCode : null
    const message = String(body.errorMessage ?? body.ResponseDescription ?? `HTTP ${res.status}`)
    let e = new ProviderError(res.status, errorCode, message)
    if (refusalOf(e)) e = new ProviderError(res.status, errorCode, message, false)
    // The STK query's "still processing" and the 500.001.1001 refusals are answers, not failures.
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
    const t = { value, expiresAt: Date.now() + (ttl - margin) * 1000 }
    tokens.set(app, t)
    writeShared(app, t)
    return value
  }

  const accessToken = async (): Promise<string> => {
    let token = tokens.get(app)
    if (!token || token.expiresAt <= Date.now()) {
      token = readShared(app)
      if (token) tokens.set(app, token)
    }
    if (token && token.expiresAt > Date.now()) return token.value
    let pending = pendingTokens.get(app)
    if (!pending) {
      pending = fetchToken().finally(() => pendingTokens.delete(app))
      pendingTokens.set(app, pending)
    }
    return pending
  }

  const authed = async (path: string, payload: unknown, repeatable = true) => {
    return retry(async () => {
      let bearer = ''
      try {
        bearer = await accessToken()
      } catch (err) {
        // Without a token the request itself was never sent.
        const e = (err as { originalError?: unknown }).originalError ?? err
        const unsent = new ProviderError(
          e instanceof ProviderError ? e.status : 0,
          e instanceof ProviderError ? e.errorCode : null,
          `OAuth: ${(e as Error).message}`,
          false,
        )
        // The token fetch ran its own retries: another round here would multiply them.
        throw new AbortError(unsent)
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
          // Another client of the app (or a sibling process) may have renewed it already: use
          // theirs; drop only the one refused.
          refusedTokens.add(bearer)
          if (refusedTokens.size > 1000) refusedTokens.delete(refusedTokens.values().next().value!)
          const shared = readShared(app)
          if (shared) tokens.set(app, shared)
          else if (tokens.get(app)?.value === bearer) tokens.delete(app)
          throw new ProviderError(pe.status, pe.errorCode, pe.message, false)
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

  /**
   * The app's token: the live one the payment clients use, else a new one that they use from then
   * on (Daraja invalidates the previous token whenever one is generated, so nobody keeps another).
   */
  const token = () => unwrap(accessToken())

  return { authed, unwrap, token }
}
