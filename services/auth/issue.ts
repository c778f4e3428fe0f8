import { importPKCS8, SignJWT } from 'jose'
import { newId } from '../kernel/ids.ts'
import type { Role } from '../kernel/roles.ts'
import { TOKEN_ALGORITHM } from '../kernel/tokens.ts'

export interface Issuer {
  /** Signs an access token with the platform's private key (only auth holds it). */
  accessToken(user: {
    id: string
    tenantId: string
    role: Role
    /** The refresh-token family the access token belongs to (`sid`), for logout. */
    sessionId?: string
  }): Promise<{ token: string; expiresIn: number }>
}

export async function createIssuer(opts: {
  privateKeyPem: string
  issuer: string
  audience: string
  ttlSeconds: number
  now: () => number
}): Promise<Issuer> {
  const key = await importPKCS8(opts.privateKeyPem, TOKEN_ALGORITHM)
  return {
    async accessToken(user) {
      const nowMs = opts.now()
      const iat = Math.floor(nowMs / 1000)
      // `iat_ms` orders the token against revocations within the same second (logout, re-login).
      const token = await new SignJWT({
        tenant_id: user.tenantId,
        role: user.role,
        iat_ms: nowMs,
        ...(user.sessionId ? { sid: user.sessionId } : {}),
      })
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: 'JWT' })
        .setIssuer(opts.issuer)
        .setAudience(opts.audience)
        .setSubject(user.id)
        .setIssuedAt(iat)
        .setExpirationTime(iat + opts.ttlSeconds)
        .setJti(newId('ses'))
        .sign(key)
      return { token, expiresIn: opts.ttlSeconds }
    },
  }
}

/** Opaque random tokens (refresh, invitation): 32 random bytes, stored only as SHA-256. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

export function hashToken(token: string): string {
  return new Bun.CryptoHasher('sha256').update(token).digest('hex')
}
