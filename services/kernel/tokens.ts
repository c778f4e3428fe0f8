import {
  type CryptoKey,
  errors,
  importSPKI,
  type JWTPayload,
  jwtVerify,
  type KeyObject,
} from 'jose'
import { type ApiKeyResolver, createApiKeyCache } from './api-key-cache.ts'
import { AppError, Unauthenticated } from './errors.ts'
import { type Actor, type Role, roles } from './roles.ts'
import { isTenantId } from './tenant-id.ts'

export const TOKEN_ALGORITHM = 'EdDSA'

/** Secret API keys (Stripe's `sk_…`): this prefix, then 32 random bytes in base64url. */
export const API_KEY_PREFIX = 'mmp_sk_'

/**
 * The signed purpose (`X-MMP-Purpose` under the hop signature) of a process asking auth about a
 * key it was shown: auth answers only the platform, never a client sending a key to the route.
 */
export const API_KEY_LOOKUP = 'api-key-lookup'

/**
 * The signed purpose of a platform process reading what it keeps a copy of (the tenant list, the
 * token revocations) without a token: a part on another host has the hop key but not the JWT
 * private key. Accepted on operator reads only (`GET`), as the platform's own operator.
 */
export const PLATFORM_SYNC = 'platform-sync'

/** Whether a bearer credential is an API key rather than an access token. */
export const isApiKey = (token: string): boolean => token.startsWith(API_KEY_PREFIX)

/** The longest a process reuses auth's answer about an API key (plan changes apply within it). */
export const API_KEY_CACHE_MS = 30_000

export type { ApiKeyGrant, ApiKeyResolver } from './api-key-cache.ts'

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
  /**
   * Records a revocation in this process: the user's tokens issued at or before `before` (epoch
   * seconds, fractions allowed) stop verifying, only those of one session when `sessionId` is
   * given. Entries older than the longest token lifetime are pruned.
   */
  revoke(revocation: Revocation): void
  /**
   * Where API keys are looked up from now on: the auth process installs its direct database
   * lookup over the daemon's HTTP one.
   */
  resolveApiKeysWith(resolver: ApiKeyResolver): void
}

/** `mobilemoney.auth.revoked` in the verifier's words. */
export interface Revocation {
  userId: string
  /** Epoch seconds; tokens issued at or before it are dead. */
  before: number
  sessionId?: string | null | undefined
  /** An API key's revocation: the key stops at once, cached or not; `userId` is ignored. */
  apiKeyId?: string | undefined
}

interface Entry {
  actor: Actor
  /** When the token was issued, in epoch ms (`iat_ms` when present, else `iat`). */
  issuedMs: number
  sid: string | undefined
}

export async function createTokenVerifier(
  /**
   * The signing public key, or its promise: a part that asks auth's JWKS for it serves at once
   * and answers 503 for tokens until the key has come.
   */
  publicKeyPem: string | Promise<string>,
  settings: TokenSettings,
  opts: {
    cacheSize?: number
    now?: () => number
    maxTokenAgeSec?: number
    /** How API keys are looked up; without one they are refused. */
    resolveApiKey?: ApiKeyResolver
    /** How long an answer about a key is reused (at most API_KEY_CACHE_MS). */
    apiKeyCacheMs?: number
  } = {},
): Promise<TokenVerifier> {
  let key: CryptoKey | KeyObject | null = null
  const keyReady = Promise.resolve(publicKeyPem).then(async (pem) => {
    key = await importSPKI(pem, TOKEN_ALGORITHM)
  })
  // A key given outright is there before the first request; one still coming is awaited by none.
  if (typeof publicKeyPem === 'string') await keyReady
  else keyReady.catch(() => {})
  const cache = new Map<string, Entry>()
  const max = opts.cacheSize ?? 10_000
  const now = opts.now ?? Date.now
  const apiKeys = createApiKeyCache({
    now,
    max,
    keyCacheMs: Math.min(opts.apiKeyCacheMs ?? API_KEY_CACHE_MS, API_KEY_CACHE_MS),
    resolver: opts.resolveApiKey,
  })
  const maxAgeMs = (opts.maxTokenAgeSec ?? 86_400) * 1000
  /** user id → revoked-before (ms) for all of the user's tokens. */
  const users = new Map<string, number>()
  /** session id → revoked-before (ms) for that session's tokens. */
  const sessions = new Map<string, number>()
  let revocations = 0

  const assertLive = (e: Entry) => {
    if (revocations === 0) return
    const user = users.get(e.actor.userId)
    const session = e.sid === undefined ? undefined : sessions.get(e.sid)
    if (
      (user !== undefined && e.issuedMs <= user) ||
      (session !== undefined && e.issuedMs <= session)
    )
      throw new Unauthenticated('the token has been revoked')
  }
  let prunedAt = Number.NEGATIVE_INFINITY
  const prune = () => {
    // A sweep at most every few seconds keeps loading a long list linear.
    if (now() - prunedAt < 5_000) return
    prunedAt = now()
    const oldest = prunedAt - maxAgeMs
    for (const map of [users, sessions])
      for (const [k, before] of map) if (before < oldest) map.delete(k)
    apiKeys.prune(oldest)
  }

  return {
    async verify(token) {
      if (isApiKey(token)) return apiKeys.verify(token)
      const hit = cache.get(token)
      if (hit) {
        if ((hit.actor.exp ?? 0) * 1000 > now()) {
          assertLive(hit)
          // LRU order matters only near the bound; below it a hit costs one lookup.
          if (cache.size > max / 2) {
            cache.delete(token)
            cache.set(token, hit)
          }
          return hit.actor
        }
        cache.delete(token)
      }
      if (!key)
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'the token key is not known yet: auth has not answered',
        )
      const entry = await verifiedEntry({ token, key, settings, now })
      assertLive(entry)
      if (cache.size >= max) cache.delete(cache.keys().next().value as string)
      cache.set(token, entry)
      return entry.actor
    },
    forget(token) {
      cache.delete(token)
      apiKeys.forget(token)
    },
    revoke(r) {
      if (r.apiKeyId) {
        apiKeys.revoke(r.apiKeyId)
        prune()
        return
      }
      const beforeMs = Math.round(r.before * 1000)
      const map = r.sessionId ? sessions : users
      const k = r.sessionId ? r.sessionId : r.userId
      // Older than any live token: nothing it covers can verify any more.
      if (beforeMs < now() - maxAgeMs) return
      if ((map.get(k) ?? Number.NEGATIVE_INFINITY) < beforeMs) map.set(k, beforeMs)
      prune()
      revocations = users.size + sessions.size
    },
    resolveApiKeysWith(resolver) {
      apiKeys.resolveWith(resolver)
    },
  }
}

/** A token's signature and claims checked (algorithm, issuer, audience, times); its cache entry. */
async function verifiedEntry({
  token,
  key,
  settings,
  now,
}: {
  token: string
  key: CryptoKey | KeyObject
  settings: TokenSettings
  now: () => number
}): Promise<Entry> {
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
  const entry: Entry = {
    actor: actorOf(payload, token),
    issuedMs: typeof payload.iat_ms === 'number' ? payload.iat_ms : (payload.iat as number) * 1000,
    sid: typeof payload.sid === 'string' ? payload.sid : undefined,
  }
  return entry
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
