import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { darajaTimestamp, stkPassword } from '../services/payment/daraja.ts'
import type { Config } from './config.ts'
import type { Check } from './doctor-check.ts'

/**
 * The go-live checks of `mmp doctor --daraja`: the configured Daraja base URL is called with the
 * configured credentials, and each problem is said in one line. Nothing is charged and nobody is
 * prompted: OAuth, an STK query for a request that does not exist (Daraja checks the shortcode
 * and password before it looks the request up), and a one-minute Pull Transactions query.
 */
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

const said = (a: Answer) =>
  [a.body.errorCode, a.body.errorMessage ?? a.body.ResponseDescription ?? a.body.ResponseMessage]
    .filter(Boolean)
    .join(' ') || `HTTP ${a.status}`

/** The provider payment would call: mpesa.base_url, else the simulator. */
export function providerUrlOf(config: Config): { url: string; live: boolean } {
  const base = config.get<string | null>('mpesa.base_url')
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  const url =
    base ??
    config.get<string | null>('mpesa.simulator_url') ??
    `http://${host}:${config.ports.simulator}`
  return { url: url.replace(/\/+$/, ''), live: !!base }
}

export async function darajaChecks(config: Config, now = new Date()): Promise<Check[]> {
  const { url, live } = providerUrlOf(config)
  const key = config.get<string>('mpesa.consumer_key')
  const secret = config.get<string>('mpesa.consumer_secret')
  const shortcode = config.get<string>('mpesa.shortcode')
  const passkey = config.get<string>('mpesa.passkey')
  const checks: Check[] = [callbackCheck(config, live)]
  let token: string
  try {
    const basic = Buffer.from(`${key}:${secret}`).toString('base64')
    const a = await call(`${url}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    })
    token = String(a.body.access_token ?? '')
    if (a.status !== 200 || !token) {
      checks.push({
        name: 'daraja oauth',
        status: 'fail',
        detail: `${url} refused the consumer key and secret (${said(a)})`,
        fix: 'set mpesa.consumer_key and mpesa.consumer_secret to the app keys of this environment (sandbox and production keys differ)',
      })
      return checks
    }
    checks.push({ name: 'daraja oauth', status: 'ok', detail: `${url} issued a token` })
  } catch (err) {
    checks.push({
      name: 'daraja oauth',
      status: 'fail',
      detail: `${url} did not answer (${(err as Error).message})`,
      fix: 'check mpesa.base_url and that this host reaches it (DNS, firewall, proxy)',
    })
    return checks
  }
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
  }).catch((err: Error): Answer => ({ status: 0, body: { errorMessage: err.message } }))
  const wrong = /wrong credentials|merchant does not exist/i.test(String(q.body.errorMessage ?? ''))
  checks.push(
    wrong
      ? {
          name: 'daraja stk credentials',
          status: 'fail',
          detail: `M-Pesa refused shortcode ${shortcode} with the configured passkey (${said(q)}): every STK push would fail`,
          fix: 'set mpesa.shortcode to the shortcode used on Go Live and mpesa.passkey to the passkey Safaricom emailed for it',
        }
      : q.status === 0 || q.status === 404
        ? {
            name: 'daraja stk credentials',
            status: 'warn',
            detail: `could not check shortcode ${shortcode} (${said(q)})`,
          }
        : {
            name: 'daraja stk credentials',
            status: 'ok',
            detail: `shortcode ${shortcode} and its passkey are accepted`,
          },
  )
  checks.push(await pullCheck(url, headers, shortcode, now))
  return checks
}

async function pullCheck(
  url: string,
  headers: Record<string, string>,
  shortcode: string,
  now: Date,
): Promise<Check> {
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
  }).catch((err: Error): Answer => ({ status: 0, body: { errorMessage: err.message } }))
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

function callbackCheck(config: Config, live: boolean): Check {
  const base = config.get<string | null>('mpesa.callback_base_url')
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

/** The operator alerts about money the payment service raised (platform/payment.db). */
export function paymentAlertChecks(dataDir: string): Check[] {
  const file = join(dataDir, 'platform', 'payment.db')
  if (!existsSync(file)) return []
  let rows: Array<{ name: string; detail: string; last_at: string }> = []
  try {
    const db = new Database(file, { readonly: true })
    try {
      rows = db
        .query<{ name: string; detail: string; last_at: string }, []>(
          'SELECT name, detail, last_at FROM payment_alerts WHERE cleared_at IS NULL ORDER BY name',
        )
        .all()
    } finally {
      db.close()
    }
  } catch {
    return []
  }
  if (rows.length === 0)
    return [{ name: 'payment alerts', status: 'ok', detail: 'no alert about money' }]
  return rows.map((r) => ({
    name: `payment alert ${r.name}`,
    status: r.name === 'provider_credentials' ? 'fail' : 'warn',
    detail: `${r.detail} (last ${r.last_at})`,
    fix:
      r.name === 'provider_credentials'
        ? 'fix the M-Pesa settings, then check them with `mmp doctor --daraja`'
        : 'run `mmp payments reconcile`; see docs/daraja.md',
  }))
}
