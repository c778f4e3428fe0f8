/**
 * Standard Webhooks signatures (DESIGN §9): `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`. A `whsec_<base64>` secret is base64-decoded; any other string is
 * used as its UTF-8 bytes. Several keys (a rotated secret still in its overlap window) give
 * several space-separated signatures, any of which a verifier accepts.
 */
export const SECRET_PREFIX = 'whsec_'

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** The HMAC key bytes of a secret, or null when a `whsec_` secret is not valid base64. */
export function secretKey(secret: string): Uint8Array | null {
  if (secret.startsWith(SECRET_PREFIX)) {
    const b64 = secret.slice(SECRET_PREFIX.length)
    if (!b64 || b64.length % 4 !== 0 || !BASE64.test(b64)) return null
    const bytes = Buffer.from(b64, 'base64')
    return bytes.length > 0 ? new Uint8Array(bytes) : null
  }
  return new TextEncoder().encode(secret)
}

/** Key sizes a given secret may have (DESIGN §9): at least HMAC-SHA256's 192-bit floor. */
export const MIN_SECRET_BYTES = 24
export const MAX_SECRET_BYTES = 64

/** Why a secret given by a user may not sign, or null when it may. */
export function secretProblem(secret: string): string | null {
  const key = secretKey(secret)
  if (!key) return 'a whsec_ secret must be followed by non-empty base64'
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES)
    return `must be ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} random bytes (whsec_ + base64, or a plain string of that many bytes); this one is ${key.length} bytes; omit it to have one generated`
  return null
}

/** A fresh `whsec_` secret of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')
}

/** `v1,<sig>` for each key, joined by spaces (Bun.CryptoHasher: no await per item, DESIGN §14). */
export function signatureHeader(
  keys: readonly Uint8Array[],
  msgId: string,
  timestampSec: number,
  body: string,
): string {
  const input = `${msgId}.${timestampSec}.${body}`
  return keys
    .map((key) => {
      const h = new Bun.CryptoHasher('sha256', key)
      h.update(input)
      return `v1,${h.digest('base64')}`
    })
    .join(' ')
}

/** The three Standard Webhooks headers plus content type for one attempt. */
export function signedHeaders(
  keys: readonly Uint8Array[],
  msgId: string,
  timestampSec: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'mmp-webhooks/1',
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': signatureHeader(keys, msgId, timestampSec, body),
  }
}
