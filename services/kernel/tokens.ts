import {
  type CryptoKey,
  errors,
  importSPKI,
  type JWTPayload,
  jwtVerify,
  type KeyObject,
} from 'jose'
import { AppError, Unauthenticated } from './errors.ts'
import { type Actor, type Role, roles } from './roles.ts'
import { isTenantId } from './tenant-id.ts'

export const TOKEN_ALGORITHM = 'EdDSA'

export interface TokenSettings {
  issuer: string
  audience: string
  /** Seconds of clock skew accepted on exp/iat/nbf. */
  clockToleranceSec: number
}

/**
 * Verifies access tokens with the public key only, one algorithm allow-listed and every claim the
 * platform relies on required (DESIGN §13: library defaults are loose). Verified tokens are cached
 * until they expire, because signature checks are the gateway's largest cost (DESIGN §14).
 *
 * @example
 * const verifier = await createTokenVerifier(publicKeyPem, settings)
 * const actor = await verifier.verify(token)
 */
export interface TokenVerifier {
  verify(token: string): Promise<Actor>
  /** Forget a token (logout, revocation) in this process. */
  forget(token: string): void
}

export async function createTokenVerifier(
  publicKeyPem: string,
  settings: TokenSettings,
  opts: { cacheSize?: number; now?: () => number } = {},
): Promise<TokenVerifier> {
  const key: CryptoKey | KeyObject = await importSPKI(publicKeyPem, TOKEN_ALGORITHM)
  const cache = new Map<string, Actor>()
  const max = opts.cacheSize ?? 10_000
  const now = opts.now ?? Date.now

  return {
    async verify(token) {
      const hit = cache.get(token)
      if (hit) {
        if ((hit.exp ?? 0) * 1000 > now()) {
          // LRU order matters only near the bound; below it a hit costs one lookup.
          if (cache.size > max / 2) {
            cache.delete(token)
            cache.set(token, hit)
          }
          return hit
        }
        cache.delete(token)
      }
      let payload: JWTPayload
      try {
        ;({ payload } = await jwtVerify(token, key, {
          algorithms: [TOKEN_ALGORITHM],
          issuer: settings.issuer,
          audience: settings.audience,
          requiredClaims: ['exp', 'iat', 'sub', 'tenant_id', 'role'],
          clockTolerance: settings.clockToleranceSec,
          currentDate: new Date(now()),
        }))
      } catch (err) {
        if (err instanceof errors.JWTExpired) throw new Unauthenticated('the token has expired')
        throw new Unauthenticated('the token is invalid')
      }
      if (
        typeof payload.iat === 'number' &&
        payload.iat * 1000 > now() + settings.clockToleranceSec * 1000
      ) {
        throw new Unauthenticated('the token is issued in the future')
      }
      const actor = actorOf(payload, token)
      if (cache.size >= max) cache.delete(cache.keys().next().value as string)
      cache.set(token, actor)
      return actor
    },
    forget(token) {
      cache.delete(token)
    },
  }
}

function actorOf(p: JWTPayload, token: string): Actor {
  const role = p.role as Role
  if (typeof p.sub !== 'string' || !p.sub) throw new Unauthenticated('the token has no subject')
  if (!isTenantId(p.tenant_id)) throw new Unauthenticated('the token names no valid tenant')
  if (!roles.includes(role)) throw new Unauthenticated('the token names no valid role')
  return { userId: p.sub, tenantId: p.tenant_id, role, token, jti: p.jti, exp: p.exp }
}

/** Reads `Authorization: Bearer …`; anything else is a 401. */
export function bearerToken(header: string | null | undefined): string {
  if (!header) throw new Unauthenticated()
  const m = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i.exec(header.trim())
  if (!m?.[1]) throw new Unauthenticated('the Authorization header must be "Bearer <token>"')
  return m[1]
}

export { AppError }
