import { timingSafeEqual } from 'node:crypto'

/** The header that proves the platform itself set the signed headers of a request. */
export const HOP_HEADER = 'x-mmp-hop'

/**
 * What one part of the platform tells another through a header that the token cannot vouch for:
 * the client's address (set by the gateway) and a request's purpose (billing paying an invoice
 * for a suspended tenant). A direct caller of a service port can send these too, so they count
 * only under a valid hop signature (DESIGN §5 zero trust).
 */
export const SIGNED_HEADERS = ['x-forwarded-for', 'x-mmp-purpose'] as const
export type SignedHeader = (typeof SIGNED_HEADERS)[number]

/** How long a signed hop stays valid: a hop is made and checked within one request's budget. */
const MAX_AGE_MS = 5 * 60_000

export interface Hop {
  /** Signs the current values of the signed headers, bound to the request's bearer token. */
  sign(headers: Headers): void
  /** A signed header's value when the hop signature holds, otherwise null. */
  trusted(headers: Headers, name: SignedHeader): string | null
}

/**
 * HMAC-SHA256 with a per-install key over a timestamp, the Authorization header and the signed
 * headers' values, so a signature cannot be moved to another token or another claim.
 *
 * @example
 * const hop = createHop(secrets.hopKey)
 * headers.set('x-forwarded-for', clientIp)
 * hop.sign(headers)
 * // in a service:
 * const ip = hop.trusted(request.headers, 'x-forwarded-for') ?? socketAddress
 */
export function createHop(key: string, now: () => number = Date.now): Hop {
  if (!key) throw new Error('the internal hop key is empty')
  const mac = (ts: string, headers: Headers) => {
    const h = new Bun.CryptoHasher('sha256', key)
    h.update(ts)
    h.update('\n')
    h.update(headers.get('authorization') ?? '')
    for (const name of SIGNED_HEADERS) {
      h.update('\n')
      h.update(headers.get(name) ?? '')
    }
    return h.digest('base64url')
  }
  return {
    sign(headers) {
      const ts = String(now())
      headers.set(HOP_HEADER, `${ts}.${mac(ts, headers)}`)
    },
    trusted(headers, name) {
      const value = headers.get(name)
      if (value === null) return null
      const hop = headers.get(HOP_HEADER)
      const dot = hop?.indexOf('.') ?? -1
      if (!hop || dot < 1) return null
      const ts = hop.slice(0, dot)
      const age = now() - Number(ts)
      if (!Number.isFinite(age) || age > MAX_AGE_MS || age < -MAX_AGE_MS) return null
      const given = Buffer.from(hop.slice(dot + 1))
      const expected = Buffer.from(mac(ts, headers))
      return given.length === expected.length && timingSafeEqual(given, expected) ? value : null
    },
  }
}
