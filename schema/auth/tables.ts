import { sql } from 'drizzle-orm'
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/** Login identities. A user belongs to one tenant; the operator is Admin of tenant 'platform'. */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash'),
    role: text('role').notNull(),
    status: text('status').notNull(),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  // One account per address among those that sign in; an invitation may name an address that
  // has an account in another tenant (answering otherwise would tell the inviter it exists).
  (t) => [
    uniqueIndex('users_email').on(t.email).where(sql`status <> 'invited'`),
    uniqueIndex('users_tenant_email').on(t.tenantId, t.email),
    index('users_tenant').on(t.tenantId),
  ],
)

/** Single-use invitation tokens; only their SHA-256 is stored. */
export const invites = sqliteTable('invites', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
  createdAt: text('created_at').notNull(),
})

/** Rotating refresh tokens grouped in families; reuse of a rotated one revokes its family. */
export const refreshTokens = sqliteTable(
  'refresh_tokens',
  {
    id: text('id').primaryKey(),
    familyId: text('family_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    revokedAt: text('revoked_at'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('refresh_token_hash').on(t.tokenHash),
    index('refresh_family').on(t.familyId),
  ],
)

/** Failed logins per email+IP, for slowing down guessing. */
export const loginFailures = sqliteTable('login_failures', {
  key: text('key').primaryKey(),
  count: integer('count').notNull(),
  firstAt: text('first_at').notNull(),
  lastAt: text('last_at').notNull(),
})

/**
 * Revoked access tokens: a user's (removal, logout everywhere) or one session's (logout, refresh
 * reuse) tokens issued at or before `before_ms`. Kept for the longest access-token lifetime.
 */
export const revocations = sqliteTable(
  'revocations',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    sessionId: text('session_id'),
    beforeMs: integer('before_ms').notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [index('revocations_before').on(t.beforeMs)],
)

/**
 * Secret API keys for servers (`mmp_sk_…`): a tenant's, with one role. Only the SHA-256 of the key
 * is stored (the key is 32 random bytes, so a fast hash is enough); `prefix` is what lists show.
 * Revoked keys stay as a record with `revoked_at`.
 */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull(),
    role: text('role').notNull(),
    prefix: text('prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at'),
    lastUsedAt: text('last_used_at'),
    revokedAt: text('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.keyHash), index('api_keys_tenant').on(t.tenantId)],
)
