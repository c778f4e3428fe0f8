import { Unauthenticated } from './errors.ts'
import type { Actor, Role } from './roles.ts'

/** A secret API key as issued: `mmp_sk_`, then 32 random bytes in base64url. */
const API_KEY = /^mmp_sk_[A-Za-z0-9_-]{43}$/

/** What auth answers for a live API key. */
export interface ApiKeyGrant {
  /** `key_…`: the actor's `userId`, so logs and `X-User-ID` name the key. */
  id: string
  tenantId: string
  role: Role
  /** Epoch ms after which the key is refused; null: never. */
  expiresAt: number | null
}

/**
 * Asks auth about a presented key: its grant, or null when it is unknown, revoked or expired.
 * Other refusals (the plan lacks `api_access`) and outages are thrown and never cached.
 */
export type ApiKeyResolver = (key: string) => Promise<ApiKeyGrant | null>

/**
 * Auth's answers about API keys, each reused for `keyCacheMs`; one question to auth per key at a
 * time, however many requests carry it. A revoked key id is refused at once, even when an answer
 * about it was already on its way.
 */
export function createApiKeyCache({
  now,
  max,
  keyCacheMs,
  resolver,
}: {
  now: () => number
  max: number
  keyCacheMs: number
  resolver: ApiKeyResolver | undefined
}) {
  let resolveApiKey = resolver
  /** key → auth's answer and when it was asked for. */
  const keys = new Map<string, { grant: ApiKeyGrant; askedAt: number }>()
  const asking = new Map<string, Promise<ApiKeyGrant | null>>()
  /** Revoked key ids → when. */
  const revokedKeys = new Map<string, number>()
  const keyActor = (grant: ApiKeyGrant, key: string): Actor => {
    if (revokedKeys.has(grant.id)) throw new Unauthenticated('the API key has been revoked')
    if (grant.expiresAt !== null && grant.expiresAt <= now())
      throw new Unauthenticated('the API key has expired')
    return { userId: grant.id, tenantId: grant.tenantId, role: grant.role, token: key }
  }
  return {
    async verify(key: string): Promise<Actor> {
      if (!API_KEY.test(key)) throw new Unauthenticated('the API key is invalid')
      const hit = keys.get(key)
      if (hit && now() - hit.askedAt < keyCacheMs) return keyActor(hit.grant, key)
      keys.delete(key)
      if (!resolveApiKey) throw new Unauthenticated('API keys are not accepted here')
      const askedAt = now()
      let pending = asking.get(key)
      if (!pending) {
        pending = resolveApiKey(key).finally(() => asking.delete(key))
        asking.set(key, pending)
      }
      const grant = await pending
      if (!grant) throw new Unauthenticated('the API key is invalid, revoked or expired')
      const actor = keyActor(grant, key)
      if (keys.size >= max) keys.delete(keys.keys().next().value as string)
      keys.set(key, { grant, askedAt })
      return actor
    },
    forget: (key: string) => keys.delete(key),
    revoke(id: string) {
      revokedKeys.set(id, now())
      for (const [key, e] of keys) if (e.grant.id === id) keys.delete(key)
    },
    /** Forgets revocations from before `oldest` (epoch ms): no token that old still verifies. */
    prune(oldest: number) {
      for (const [k, at] of revokedKeys) if (at < oldest) revokedKeys.delete(k)
    },
    resolveWith(r: ApiKeyResolver) {
      resolveApiKey = r
    },
  }
}
