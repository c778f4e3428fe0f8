import { and, eq, isNull, lt, or } from 'drizzle-orm'
import { apiKeys } from '../../schema/auth/tables.ts'
import { type AuthRevokedEvent, topics } from '../../schema/events.ts'
import type { TenantRegistry } from '../../tenants/registry.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { AppError, Forbidden, invalidField, NotFound } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import type { Logger } from '../kernel/log.ts'
import { type Actor, isOperator, type Role, tenantFor } from '../kernel/roles.ts'
import { snakeFields } from '../kernel/snake.ts'
import { assertTenantId, PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import type { Revocation } from '../kernel/tokens.ts'
import { API_KEY_PREFIX, type ApiKeyGrant, isApiKey } from '../kernel/tokens.ts'
import { hashToken, randomToken } from './issue.ts'

/** What key handling needs of auth's dependencies (AuthDeps fits it). */
export interface ApiKeyDeps {
  db: Db
  /** Plan features (`api_access`) and whether the tenant still exists. */
  registry: TenantRegistry
  clock: Clock
  log: Logger
  revokeLocally?: ((r: Revocation) => void) | undefined
}

/** Characters of a key kept in the clear for lists: the prefix and 5 of its 43 secret ones. */
const SHOWN = API_KEY_PREFIX.length + 5
/** `last_used_at` is written at most this often per key, not on every request. */
const TOUCH_EVERY_MS = 60_000

/**
 * Keys act like a person's token of their role except here: managing keys or users is a person's
 * act, so a leaked key cannot mint another key or an account that outlives its revocation.
 */
export function assertPerson(actor: Actor): void {
  if (isApiKey(actor.token))
    throw new Forbidden('API keys cannot manage API keys or users; sign in as a person')
}

/** The `api_access` feature of the tenant's plan (overrides included) gates making and using keys. */
function assertApiAccess(deps: ApiKeyDeps, tenantId: string): void {
  if (deps.registry.placement(tenantId).features?.api_access === false)
    throw new AppError(
      'FEATURE_DISABLED',
      `API keys (api_access) are not enabled for tenant ${tenantId}`,
      { extra: { feature: 'api_access' } },
    )
}

/**
 * A key as the API answers it (its hash never goes out), its keys in the response schema's order
 * (an idempotent replay answers the stored value in the order built here).
 */
export function publicApiKey(k: typeof apiKeys.$inferSelect) {
  return {
    ...snakeFields(k, ['id', 'tenantId', 'name']),
    role: k.role as Role,
    ...snakeFields(k, ['prefix', 'createdAt', 'expiresAt', 'lastUsedAt']),
  }
}

/**
 * Makes a key for the actor's tenant (the operator: any tenant but its own). The key is returned
 * once; only its SHA-256 is kept. A fast hash and not argon2: the key is 32 random bytes, which
 * no guessing reaches, and it is checked on every request.
 */
export function createApiKey(
  deps: ApiKeyDeps,
  actor: Actor,
  input: { tenant_id?: string | undefined; name: string; role: Role; expires_at?: string | null },
) {
  assertPerson(actor)
  const tenantId = tenantFor(actor, input.tenant_id ? assertTenantId(input.tenant_id) : undefined)
  if (tenantId === PLATFORM_TENANT)
    throw new Forbidden('the platform tenant has no API keys; they belong to tenants')
  assertApiAccess(deps, tenantId)
  const now = deps.clock.now()
  let expiresAt: string | null = null
  if (input.expires_at) {
    const at = Date.parse(input.expires_at)
    if (!Number.isFinite(at)) throw invalidField('expires_at', 'must be an ISO 8601 date-time')
    if (at <= now.getTime()) throw invalidField('expires_at', 'must be in the future')
    expiresAt = new Date(at).toISOString()
  }
  const key = `${API_KEY_PREFIX}${randomToken()}`
  const row = {
    // ids.ts lists the kernel's prefixes; `key_` is auth's own until it joins that list.
    id: newId('key'),
    tenantId,
    name: input.name.trim(),
    role: input.role,
    prefix: key.slice(0, SHOWN),
    keyHash: hashToken(key),
    createdBy: actor.userId,
    createdAt: now.toISOString(),
    expiresAt,
    lastUsedAt: null,
    revokedAt: null,
  }
  deps.db.write((orm) => orm.insert(apiKeys).values(row).run())
  deps.log.info('API key created', { key_id: row.id, tenant_id: tenantId, role: row.role })
  return { ...publicApiKey(row), key }
}

/** The live (unrevoked) keys of a tenant, newest first; never the key itself. */
export function listApiKeys(deps: ApiKeyDeps, actor: Actor, tenantIdParam: string | undefined) {
  assertPerson(actor)
  const tenantId = tenantFor(actor, tenantIdParam ? assertTenantId(tenantIdParam) : undefined)
  return deps.db.orm
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .all()
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .map(publicApiKey)
}

/**
 * Revokes a key of the actor's tenant (the operator: of any). Published on
 * `mobilemoney.auth.revoked` in the same transaction, and dropped from this process's verifier
 * before the answer, so it stops at once everywhere. Another tenant's key is a 404.
 */
export function revokeApiKey(deps: ApiKeyDeps, actor: Actor, id: string): void {
  assertPerson(actor)
  const found = deps.db.orm
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .get()
  if (!found || (found.tenantId !== actor.tenantId && !isOperator(actor)))
    throw new NotFound('API key', id)
  revokeKeys(deps, [found])
}

/** Tenant erasure: every key of the tenant stops with its users. */
export function revokeTenantApiKeys(deps: ApiKeyDeps, tenantId: string): number {
  const live = deps.db.orm
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.tenantId, tenantId), isNull(apiKeys.revokedAt)))
    .all()
  revokeKeys(deps, live)
  return live.length
}

function revokeKeys(deps: ApiKeyDeps, keys: Array<typeof apiKeys.$inferSelect>): void {
  if (keys.length === 0) return
  const nowMs = deps.clock.nowMs()
  deps.db.write((orm) => {
    for (const k of keys) {
      orm
        .update(apiKeys)
        .set({ revokedAt: new Date(nowMs).toISOString() })
        .where(eq(apiKeys.id, k.id))
        .run()
      // user_id carries the key id too: no user has it, so a reader that knows no keys is unharmed.
      const data: AuthRevokedEvent = {
        user_id: k.id,
        session_id: null,
        before: nowMs / 1000,
        reason: 'api_key_revoked',
        api_key_id: k.id,
      }
      emitEvent(deps.db, { topic: topics.authRevoked, tenantId: k.tenantId, data }, deps.clock)
    }
  })
  for (const k of keys) deps.revokeLocally?.({ userId: k.id, apiKeyId: k.id, before: nowMs / 1000 })
}

/**
 * The verifier's lookup where auth runs: the live key with this hash, or null. Notes the use in
 * `last_used_at`, at most once a minute per key (the verifier asks at most every 30 s per process,
 * and the update's condition keeps concurrent askers to one write).
 */
export function resolveApiKey(deps: ApiKeyDeps, key: string): ApiKeyGrant | null {
  const row = deps.db.orm
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hashToken(key)), isNull(apiKeys.revokedAt)))
    .get()
  if (!row) return null
  const nowMs = deps.clock.nowMs()
  const expiresAt = row.expiresAt ? Date.parse(row.expiresAt) : null
  if (expiresAt !== null && expiresAt <= nowMs) return null
  if (!deps.registry.hasProfile(row.tenantId)) return null
  assertApiAccess(deps, row.tenantId)
  if (!row.lastUsedAt || Date.parse(row.lastUsedAt) <= nowMs - TOUCH_EVERY_MS) {
    const stale = new Date(nowMs - TOUCH_EVERY_MS).toISOString()
    deps.db.write((orm) =>
      orm
        .update(apiKeys)
        .set({ lastUsedAt: new Date(nowMs).toISOString() })
        .where(
          and(
            eq(apiKeys.id, row.id),
            or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale)),
          ),
        )
        .run(),
    )
  }
  return { id: row.id, tenantId: row.tenantId, role: row.role as Role, expiresAt }
}
