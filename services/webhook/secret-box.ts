import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * Webhook signing secrets at rest: AES-256-GCM under a per-install key that lives outside the
 * database (`webhookKey` in `data/secrets.json`, or `MMP_WEBHOOK_SECRET_KEY`), so a copied
 * `webhook.db` alone cannot sign webhooks. Stored form: `enc:v1:<kid>:<base64 iv|ciphertext|tag>`;
 * the endpoint id is the additional data, so a sealed secret moved to another row does not open.
 * `kid` (a fingerprint of the key) tells a wrong key from a damaged value.
 */
export interface SecretBox {
  seal(secret: string, endpointId: string): string
  /** The secret of a stored value; a clear value (before encryption existed) is returned as is. */
  open(stored: string, endpointId: string): string
}

const PREFIX = 'enc:v1:'
const IV_BYTES = 12
const TAG_BYTES = 16

export const isSealed = (stored: string) => stored.startsWith(PREFIX)

/** The 32 key bytes of `MMP_WEBHOOK_SECRET_KEY` / `webhookKey`: base64 or base64url. */
export function parseBoxKey(text: string): Uint8Array {
  const bytes = Buffer.from(text.trim(), 'base64')
  if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+=*$/.test(text.trim()))
    throw new Error(
      'the webhook secret key must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)',
    )
  return new Uint8Array(bytes)
}

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== 32) throw new Error('the webhook secret key must be 32 bytes')
  const kid = createHash('sha256').update(key).digest('base64url').slice(0, 8)
  return {
    seal(secret, endpointId) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(endpointId))
      const body = Buffer.concat([
        cipher.update(secret, 'utf8'),
        cipher.final(),
        cipher.getAuthTag(),
      ])
      return `${PREFIX}${kid}:${Buffer.concat([iv, body]).toString('base64')}`
    },
    open(stored, endpointId) {
      if (!isSealed(stored)) return stored
      const [storedKid, b64] = stored.slice(PREFIX.length).split(':')
      if (storedKid !== kid)
        throw new Error(
          "the endpoint's signing secret was sealed with another key than this install's webhook key",
        )
      const raw = Buffer.from(b64 ?? '', 'base64')
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
      decipher.setAAD(Buffer.from(endpointId))
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES))
      const plain = decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES))
      return Buffer.concat([plain, decipher.final()]).toString('utf8')
    },
  }
}
