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
type Range = [ipaddr.IPv4 | ipaddr.IPv6, number]

function parseAllowList(entries: string[], setting: string): Range[] {
  return entries.map((entry): Range => {
    try {
      if (entry.includes('/')) {
        const [range, bits] = ipaddr.parseCIDR(entry)
        return [range.kind() === 'ipv6' ? ipaddr.process(range.toString()) : range, bits]
      }
      const ip = ipaddr.process(entry)
      return [ip, ip.kind() === 'ipv4' ? 32 : 128]
    } catch {
      throw new Error(`${setting}: '${entry}' is not an IP address or CIDR range`)
    }
  })
}

/** True when `ip` is in one of the ranges. */
function inRanges(ranges: Range[], ip: string | null): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    addr = ipaddr.process(ip ?? '')
  } catch {
    return false
  }
  return ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits))
}

export type C2bUrlKind = 'confirmation' | 'validation'

/**
 * Daraja production refuses callback URLs that are not https: a push, disbursement, registration
 * or query that would hand it one is refused here, before anything is written or sent.
 */
export function assertHttpsCallbacks(cfg: Pick<PaymentSettings, 'production' | 'callbackBase'>) {
  if (cfg.production && !/^https:\/\//i.test(cfg.callbackBase))
    throw new AppError(
      'PROVIDER_MISCONFIGURED',
      `M-Pesa production calls back only https addresses, and the platform's callback address (mpesa.callback_base_url) is ${cfg.callbackBase}; nothing was sent or charged. The operator must set it to the gateway's public https address.`,
    )
}

export function createCallbackAuth(cfg: PaymentSettings) {
  const allowList = parseAllowList(cfg.allowedIps, 'mpesa.allowed_ips')

  const sign = (kind: TokenKind, tid: string, ref: string) =>
    new Bun.CryptoHasher('sha256', cfg.callbackSecret)
      .update(`${kind}:${tid}:${ref}`)
      .digest('base64url')

  /**
   * A C2B URL's token: bound to the tenant holding the shortcode, the shortcode, which URL it is
   * and the shortcode's nonce (a new nonce rotates both). A shortcode registered before nonces
   * existed (nonce null) keeps its one token for both URLs until it is rotated.
   */
  const c2bToken = (which: C2bUrlKind, tid: string, shortcode: string, nonce: string | null) =>
    new Bun.CryptoHasher('sha256', cfg.callbackSecret)
      .update(
        nonce === null ? `c2b:${tid}:${shortcode}` : `c2b:${which}:${tid}:${shortcode}:${nonce}`,
      )
      .digest('hex')

  const sources = parseAllowList(cfg.c2bSourceIps, 'mpesa.c2b_source_ips')
  return {
    callbackUrl: (kind: Kind, tid: string, ref: string, extra = '') =>
      `${cfg.callbackBase}/api/v1/payments/callback${kind === 'b2c' ? '/b2c' : ''}?tid=${encodeURIComponent(tid)}&ref=${encodeURIComponent(ref)}&sig=${sign(kind, tid, ref)}${extra}`,

    /**
     * The confirmation or validation URL registered for a C2B shortcode. Daraja refuses to register
     * URLs that contain words such as "exe", "cmd", "sql" or "mpesa", so the URL names no tenant (a
     * tenant id may contain any of them) and its token is hex (base64url could spell them by chance).
     */
    c2bUrl: (which: C2bUrlKind, tid: string, shortcode: string, nonce: string | null) =>
      `${cfg.callbackBase}/api/v1/payments/c2b/${which}?ref=${encodeURIComponent(shortcode)}&sig=${c2bToken(which, tid, shortcode, nonce)}`,

    /**
     * Checks a C2B URL's token against the shortcode's holder and nonce now (401 otherwise);
     * returns what `holderOf` found with them (read once).
     */
    checkC2bToken<H>(
      which: C2bUrlKind,
      query: Record<string, string | undefined>,
      holderOf: (shortcode: string) => { tid: string; nonce: string | null; holder: H } | null,
    ): { tid: string; ref: string; holder: H } {
      const { ref, sig } = query
      if (!ref || !sig) throw new InvalidCallback('the callback token is missing')
      const held = holderOf(ref)
      if (!held || !sameBytes(sig, c2bToken(which, held.tid, ref, held.nonce)))
        throw new InvalidCallback('the callback token is invalid')
      return { tid: held.tid, ref, holder: held.holder }
    },

    /**
     * Confirmations to a shortcode nobody can query come only from Safaricom's published addresses
     * once live (`mpesa.c2b_source_ips`); no list: anywhere.
     */
    checkC2bSource(ip: string | null): void {
      if (sources.length > 0 && !inRanges(sources, ip))
        throw new InvalidCallback(
          'the confirmation does not come from an address of the payment provider',
        )
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
      if (allowList.length > 0 && !inRanges(allowList, ip))
        throw new InvalidCallback('the callback source address is not allowed')
    },
  }
}

export type CallbackAuth = ReturnType<typeof createCallbackAuth>
