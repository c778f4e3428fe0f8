import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

/**
 * A shortcode's initiator credential (Daraja's SecurityCredential, itself the initiator's
 * password encrypted with Safaricom's certificate) sealed at rest with AES-256-GCM under a key
 * derived from the callback secret: `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
export function createCredentialBox(callbackSecret: string) {
  const key = createHash('sha256').update(`c2b-initiator:${callbackSecret}`).digest()
  return {
    seal(plain: string): string {
      const iv = randomBytes(12)
      const c = createCipheriv('aes-256-gcm', key, iv)
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()])
      return ['v1', iv, c.getAuthTag(), body].map((x) => x.toString('base64url')).join('.')
    },
    /** The clear credential, or null when it cannot be opened (another callback secret). */
    open(sealed: string): string | null {
      const [v, iv, tag, body] = sealed.split('.')
      if (v !== 'v1' || !iv || !tag || body === undefined) return null
      try {
        const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        d.setAuthTag(Buffer.from(tag, 'base64url'))
        return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString()
      } catch {
        return null
      }
    },
  }
}

export type CredentialBox = ReturnType<typeof createCredentialBox>
