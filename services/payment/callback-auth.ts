import { timingSafeEqual } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import { AppError, ValidationError } from '../kernel/errors.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import type { Kind } from './rows.ts'
import type { PaymentSettings } from './settings.ts'

/** What a callback token is for: it verifies only for the kind it was issued for. */
export type TokenKind = Kind | 'result'

export class InvalidCallback extends AppError {
  constructor(detail: string) {
    super('INVALID_SIGNATURE', detail)
  }
}

/** Callback bodies are read as text so the token is checked before anything is parsed. */
export function jsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw)
  } catch {
    throw new ValidationError('the callback body is not JSON', [
      { field: '(body)', message: 'must be JSON' },
    ])
  }
}

const sameBytes = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/**
 * Callback authentication (DESIGN §8; Daraja does not sign its callbacks): a per-request HMAC token
 * in the callback URL bound to tenant and payment id, an optional body signature, an optional
 * source-IP allow-list. All compared in constant time.
 */
export function createCallbackAuth(cfg: PaymentSettings) {
  const allowList = cfg.allowedIps.map((entry): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry)
        return [range.kind() === 'ipv6' ? ipaddr.process(range.toString()) : range, bits]
      }
      const ip = ipaddr.process(entry)
      return [ip, ip.kind() === 'ipv4' ? 32 : 128]
    } catch {
      throw new Error(`mpesa.allowed_ips: '${entry}' is not an IP address or CIDR range`)
    }
  })

  const sign = (kind: TokenKind, tid: string, ref: string) =>
    new Bun.CryptoHasher('sha256', cfg.callbackSecret)
      .update(`${kind}:${tid}:${ref}`)
      .digest('base64url')

  const c2bToken = (tid: string, shortcode: string) =>
    new Bun.CryptoHasher('sha256', cfg.callbackSecret)
      .update(`c2b:${tid}:${shortcode}`)
      .digest('hex')

  return {
    callbackUrl: (kind: Kind, tid: string, ref: string, extra = '') =>
      `${cfg.callbackBase}/api/v1/payments/callback${kind === 'b2c' ? '/b2c' : ''}?tid=${encodeURIComponent(tid)}&ref=${encodeURIComponent(ref)}&sig=${sign(kind, tid, ref)}${extra}`,

    /**
     * The confirmation and validation URLs registered for a C2B shortcode: one token bound to the
     * tenant that holds the shortcode and to the shortcode. Daraja refuses to register URLs that
     * contain words such as "exe", "cmd", "sql" or "mpesa", so the URL names no tenant (a tenant id
     * may contain any of them) and its token is hex (base64url could spell them by chance).
     */
    c2bUrl: (which: 'confirmation' | 'validation', tid: string, shortcode: string) =>
      `${cfg.callbackBase}/api/v1/payments/c2b/${which}?ref=${encodeURIComponent(shortcode)}&sig=${c2bToken(tid, shortcode)}`,

    /** Checks a C2B URL's token against the tenant holding the shortcode now; 401 otherwise. */
    checkC2bToken(
      query: Record<string, string | undefined>,
      holderOf: (shortcode: string) => string | null,
    ): { tid: string; ref: string } {
      const { ref, sig } = query
      if (!ref || !sig) throw new InvalidCallback('the callback token is missing')
      const tid = holderOf(ref)
      if (!tid || !sameBytes(sig, c2bToken(tid, ref)))
        throw new InvalidCallback('the callback token is invalid')
      return { tid, ref }
    },

    /** The ResultURL (QueueTimeOutURL with `timeout`) of a status, balance or reversal request. */
    resultUrl: (tid: string, ref: string, timeout = false) =>
      `${cfg.callbackBase}/api/v1/payments/callback/result?tid=${encodeURIComponent(tid)}&ref=${encodeURIComponent(ref)}&sig=${sign('result', tid, ref)}${timeout ? '&timeout=1' : ''}`,

    checkToken(
      kind: TokenKind,
      query: Record<string, string | undefined>,
    ): { tid: string; ref: string } {
      const { tid, ref, sig } = query
      if (!tid || !ref || !sig) throw new InvalidCallback('the callback token is missing')
      if (!isTenantId(tid)) throw new InvalidCallback('the callback token is invalid')
      if (!sameBytes(sig, sign(kind, tid, ref)))
        throw new InvalidCallback('the callback token is invalid')
      return { tid, ref }
    },

    /**
     * A body signature, when the sender adds one: `X-Callback-Signature: sha256=<hex of
     * HMAC-SHA256(callback_secret, raw body)>`. Wrong → 401; right → the body is authentic and a
     * success needs no STK query. Daraja itself sends none.
     */
    checkBodySignature(raw: unknown, header: string | null | undefined): boolean {
      if (!header) return false
      if (typeof raw !== 'string') throw new InvalidCallback('the body signature cannot be checked')
      const expected = `sha256=${new Bun.CryptoHasher('sha256', cfg.callbackSecret).update(raw).digest('hex')}`
      if (!sameBytes(header.trim(), expected))
        throw new InvalidCallback('the body signature is invalid')
      return true
    },

    /** The optional source-IP allow-list (Safaricom's published ranges in production). */
    checkSource(ip: string | null): void {
      if (allowList.length === 0) return
      let addr: ipaddr.IPv4 | ipaddr.IPv6
      try {
        addr = ipaddr.process(ip ?? '')
      } catch {
        throw new InvalidCallback('the callback source address is not allowed')
      }
      const ok = allowList.some(
        ([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits),
      )
      if (!ok) throw new InvalidCallback('the callback source address is not allowed')
    },
  }
}

export type CallbackAuth = ReturnType<typeof createCallbackAuth>
