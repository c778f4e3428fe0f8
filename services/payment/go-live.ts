import { darajaTimestamp, stkPassword } from './daraja.ts'
import { createDarajaTransport, liveToken, ProviderError } from './daraja-transport.ts'
import type { PaymentSettings } from './settings.ts'

/**
 * The go-live check of the configured Daraja, shared by `mmp doctor --daraja` and the operator's
 * `POST /api/v1/payments/daraja/check`: the base URL is called with the configured credentials
 * and each problem is said in one line. Nothing is charged and nobody is prompted: OAuth, an STK
 * query for a request that does not exist (Daraja checks the shortcode and password before it
 * looks the request up), and a one-minute Pull Transactions query.
 */
export interface GoLiveCheck {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}

/** What is checked: the provider mmp calls and the credentials it calls it with. */
export interface GoLiveTarget {
  /** Daraja's base URL (or the simulator's), without a trailing slash. */
  url: string
  /** True for a configured Daraja (`mpesa.base_url`), false for the simulator. */
  live: boolean
  /** The public base URL Daraja calls back; null: the gateway's own address. */
  callbackBase: string | null
  /** Daraja production (`mpesa.environment`), which refuses http callback URLs. */
  production: boolean
  consumerKey: string
  consumerSecret: string
  shortcode: string
  passkey: string
}

interface Answer {
  status: number
  body: Record<string, unknown>
}

async function call(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  let body: Record<string, unknown> = {}
  try {
    body = text ? JSON.parse(text) : {}
  } catch {
    body = { errorMessage: text.slice(0, 120) }
  }
  return { status: res.status, body }
}

const unanswered = (err: Error): Answer => ({ status: 0, body: { errorMessage: err.message } })

const said = (a: Answer) =>
  [a.body.errorCode, a.body.errorMessage ?? a.body.ResponseDescription ?? a.body.ResponseMessage]
    .filter(Boolean)
    .join(' ') || `HTTP ${a.status}`

/** The checks of the provider the payment service is configured with. */
export function checkConfiguredDaraja(cfg: PaymentSettings, now: Date): Promise<GoLiveCheck[]> {
  return goLiveChecks(
    {
      url: cfg.providerUrl.replace(/\/+$/, ''),
      live: !cfg.usingSimulator,
      callbackBase: cfg.callbackBase,
      production: cfg.production,
      ...cfg.credentials,
    },
    now,
  )
}

export async function goLiveChecks(target: GoLiveTarget, now = new Date()): Promise<GoLiveCheck[]> {
  const { url, shortcode, passkey } = target
  const checks: GoLiveCheck[] = [callbackCheck(target)]
  const oauth = await oauthCheck(target)
  checks.push(oauth.check)
  if (!oauth.token) return checks
  const token = oauth.token
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const ts = darajaTimestamp(now)
  const q = await call(`${url}/mpesa/stkpushquery/v1/query`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      BusinessShortCode: shortcode,
      Password: stkPassword(shortcode, passkey, ts),
      Timestamp: ts,
      CheckoutRequestID: 'ws_CO_mmp_doctor_check',
    }),
  }).catch(unanswered)
  checks.push(credentialsCheck(q, shortcode))
  checks.push(await pullCheck(url, headers, shortcode, now))
  return checks
}

/**
 * The OAuth line. The token is the one the payment service holds when it has a live one (a new
 * one would make Daraja invalidate it), else a new one the service then uses as well.
 */
async function oauthCheck(target: GoLiveTarget): Promise<{ check: GoLiveCheck; token?: string }> {
  const { url } = target
  const app = {
    baseUrl: url,
    consumerKey: target.consumerKey,
    consumerSecret: target.consumerSecret,
  }
  const held = liveToken(app)
  try {
    const token = await createDarajaTransport({ ...app, retries: 0 }).token()
    const detail =
      held === token ? `${url} accepts the token payments hold` : `${url} issued a token`
    return { check: { name: 'daraja oauth', status: 'ok', detail }, token }
  } catch (err) {
    const e = err as Error & { status?: number; errorCode?: string | null }
    if (e instanceof ProviderError && e.status > 0 && e.status < 500)
      return {
        check: {
          name: 'daraja oauth',
          status: 'fail',
          detail: `${url} refused the consumer key and secret (${[e.errorCode, e.message].filter(Boolean).join(' ')})`,
          fix: 'set mpesa.consumer_key and mpesa.consumer_secret to the app keys of this environment (sandbox and production keys differ)',
        },
      }
    return {
      check: {
        name: 'daraja oauth',
        status: 'fail',
        detail: `${url} did not answer (${e.message})`,
        fix: 'check mpesa.base_url and that this host reaches it (DNS, firewall, proxy)',
      },
    }
  }
}

function credentialsCheck(q: Answer, shortcode: string): GoLiveCheck {
  const name = 'daraja stk credentials'
  if (/wrong credentials|merchant does not exist/i.test(String(q.body.errorMessage ?? '')))
    return {
      name,
      status: 'fail',
      detail: `M-Pesa refused shortcode ${shortcode} with the configured passkey (${said(q)}): every STK push would fail`,
      fix: 'set mpesa.shortcode to the shortcode used on Go Live and mpesa.passkey to the passkey Safaricom emailed for it',
    }
  if (q.status === 0 || q.status === 404)
    return { name, status: 'warn', detail: `could not check shortcode ${shortcode} (${said(q)})` }
  return { name, status: 'ok', detail: `shortcode ${shortcode} and its passkey are accepted` }
}

async function pullCheck(
  url: string,
  headers: Record<string, string>,
  shortcode: string,
  now: Date,
): Promise<GoLiveCheck> {
  const eat = (d: Date) =>
    new Date(d.getTime() + 3 * 3600_000).toISOString().slice(0, 19).replace('T', ' ')
  const a = await call(`${url}/pulltransactions/v1/query`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      ShortCode: shortcode,
      StartDate: eat(new Date(now.getTime() - 60_000)),
      EndDate: eat(now),
      OffSetValue: '0',
    }),
  }).catch(unanswered)
  const code = String(a.body.ResponseCode ?? '')
  if (a.status === 200 && (code === '1000' || code === '1001'))
    return {
      name: 'daraja pull',
      status: 'ok',
      detail: `Pull Transactions answers for ${shortcode}`,
    }
  return {
    name: 'daraja pull',
    status: 'warn',
    detail: `Pull Transactions did not answer for ${shortcode} (${said(a)}): a push whose answer is lost stays unknown until its callback`,
    fix: 'register the shortcode for Pull Transactions once (POST /pulltransactions/v1/register, see docs/daraja.md)',
  }
}

function callbackCheck({ live, production, callbackBase: base }: GoLiveTarget): GoLiveCheck {
  if (production && !/^https:\/\//i.test(base ?? ''))
    return {
      name: 'daraja callback url',
      status: 'fail',
      detail: `Daraja production refuses http callback URLs and ${base ?? 'the gateway address'} is not https: mmp refuses every STK push, B2C payment and C2B registration until it is`,
      fix: 'set mpesa.callback_base_url to the public https address of the gateway',
    }
  if (!live)
    return {
      name: 'daraja callback url',
      status: 'ok',
      detail: `the simulator calls back ${base ?? 'the gateway'}`,
    }
  if (!base || !/^https:\/\//i.test(base) || /localhost|127\.0\.0\.1|\[::1\]/i.test(base))
    return {
      name: 'daraja callback url',
      status: 'fail',
      detail: `Daraja cannot call back ${base ?? 'the gateway address'}: it needs a public https URL`,
      fix: 'set mpesa.callback_base_url to the public https address of the gateway',
    }
  return { name: 'daraja callback url', status: 'ok', detail: `Daraja calls back ${base}` }
}
