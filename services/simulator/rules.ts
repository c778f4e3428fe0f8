import { darajaError, PHONE } from './model.ts'

/**
 * Request checks as Daraja documents them, each failure answered the way Daraja answers it:
 * HTTP 400 `{requestId, errorCode: "400.002.02", errorMessage: "Bad Request - Invalid <Field>"}`.
 * A check returns the Response to send, or null when the field is fine.
 */
type Body = Record<string, unknown>
type Check = (b: Body) => Response | null

const invalid = (field: string) => darajaError(400, '400.002.02', `Bad Request - Invalid ${field}`)

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v))
const URL_RE = /^https?:\/\/[^\s]+$/i
const SHORTCODE = /^\d{5,7}$/

export const oneOf =
  (field: string, values: readonly string[]): Check =>
  (b) =>
    values.includes(str(b[field])) ? null : invalid(field)
export const phone =
  (field: string): Check =>
  (b) =>
    PHONE.test(str(b[field])) ? null : invalid(field)
export const shortcode =
  (field: string): Check =>
  (b) =>
    SHORTCODE.test(str(b[field])) ? null : invalid(field)
export const url =
  (field: string): Check =>
  (b) =>
    URL_RE.test(str(b[field])) ? null : invalid(field)
export const text =
  (field: string, max: number, min = 1): Check =>
  (b) => {
    const v = str(b[field])
    return v.trim().length >= min && v.length <= max ? null : invalid(field)
  }
export const wholeAmount =
  (field = 'Amount'): Check =>
  (b) => {
    const n = Number(b[field])
    return str(b[field]) !== '' && Number.isInteger(n) && n >= 1 && n <= 250_000
      ? null
      : invalid(field)
  }
export const present =
  (field: string): Check =>
  (b) =>
    str(b[field]).trim() ? null : invalid(field)

/**
 * `YYYYMMDDHHmmss`, a real calendar time, within a day of now. Daraja's own clients differ on
 * the zone (Nairobi time, or UTC as mpesa-node and mpesa-api send it), so a day either way.
 */
export const timestamp =
  (now: () => number): Check =>
  (b) => {
    const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(str(b.Timestamp))
    if (!m) return invalid('Timestamp')
    const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as number[]
    const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!)
    const back = new Date(ms)
    const real =
      back.getUTCMonth() === mo! - 1 && back.getUTCDate() === d! && h! < 24 && mi! < 60 && s! < 60
    const eatMs = ms - 3 * 3600_000
    return real && Math.abs(eatMs - now()) <= 27 * 3600_000 ? null : invalid('Timestamp')
  }

/**
 * Register URL refuses URLs naming these words (Daraja's documented list), and in production
 * anything but HTTPS; the simulator is the sandbox, so http is allowed.
 */
const FORBIDDEN_URL_WORDS = ['m-pesa', 'mpesa', 'safaricom', 'exe', 'exec', 'cmd', 'sql', 'query']
export const registrableUrl =
  (field: string): Check =>
  (b) => {
    const v = str(b[field])
    if (!URL_RE.test(v)) return invalid(field)
    const lower = v.toLowerCase()
    return FORBIDDEN_URL_WORDS.some((w) => lower.includes(w)) ? invalid(field) : null
  }

/** The first failing check's answer, or null. */
export function firstFailure(body: Body, checks: Check[]): Response | null {
  for (const c of checks) {
    const r = c(body)
    if (r) return r
  }
  return null
}

/**
 * Daraja reads JSON only: another content type is refused before the body is looked at, and a
 * body that is not a JSON object is an invalid payload.
 */
export async function readJsonBody(request: Request): Promise<Body | Response> {
  const type = request.headers.get('content-type') ?? ''
  if (!/^application\/json\b/i.test(type.trim()))
    return darajaError(400, '400.002.05', 'Invalid Request Payload')
  try {
    const v = await request.json()
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Body
  } catch {}
  return darajaError(400, '400.002.05', 'Invalid Request Payload')
}

export const STK_TRANSACTION_TYPES = ['CustomerPayBillOnline', 'CustomerBuyGoodsOnline'] as const
export const B2C_COMMANDS = ['BusinessPayment', 'SalaryPayment', 'PromotionPayment'] as const
