import { and, eq, isNull, type SQL } from 'drizzle-orm'
import { refreshTokens, users } from '../../schema/auth/tables.ts'
import { AppError } from '../kernel/errors.ts'
import { hashToken } from './issue.ts'
import { recordRevocation } from './revocations.ts'
import { type AuthDeps, issueSession, type Session } from './service.ts'

const invalid = () => new AppError('UNAUTHENTICATED', 'the refresh token is invalid or expired')

/**
 * Trades a refresh token for a new session (rotation). Each refresh token works once: it is
 * marked used and a new member of the same family is issued. Presenting a used token again
 * means it leaked (or a client raced itself), so the whole family is revoked and every holder
 * must log in again. Tokens of removed users are gone with them (cascade), tokens of disabled
 * users are refused.
 */
export async function refreshSession(deps: AuthDeps, refreshToken: string): Promise<Session> {
  const hash = hashToken(refreshToken)
  const now = deps.clock.now()
  const nowIso = now.toISOString()
  const row = deps.db.orm
    .select()
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, hash))
    .get()
  if (!row || row.revokedAt) throw invalid()
  if (row.usedAt) {
    revokeFamily(deps, { familyId: row.familyId, at: nowIso, userId: row.userId })
    deps.log.warn('a used refresh token was presented again; its family is revoked', {
      family_id: row.familyId,
      user_id: row.userId,
    })
    throw invalid()
  }
  if (new Date(row.expiresAt) <= now) throw invalid()
  const user = deps.db.orm.select().from(users).where(eq(users.id, row.userId)).get()
  if (user?.status !== 'active') throw invalid()
  const t = refreshTokens
  const claimed = deps.db.write((orm) =>
    orm
      .update(t)
      .set({ usedAt: nowIso })
      .where(and(eq(t.id, row.id), isNull(t.usedAt), isNull(t.revokedAt)))
      .returning({ id: t.id })
      .get(),
  )
  if (!claimed) {
    // Another request rotated it first: the same token used twice.
    revokeFamily(deps, { familyId: row.familyId, at: nowIso, userId: row.userId })
    throw invalid()
  }
  return issueSession(deps, user, row.familyId)
}

/**
 * Ends the session a refresh token belongs to (its whole family) and the access tokens issued
 * in it (their `sid`). Unknown tokens are ignored.
 */
export function logout(deps: AuthDeps, refreshToken: string): void {
  const row = deps.db.orm
    .select({ familyId: refreshTokens.familyId, userId: refreshTokens.userId })
    .from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, hashToken(refreshToken)))
    .get()
  if (row)
    revokeFamily(deps, {
      familyId: row.familyId,
      at: deps.clock.now().toISOString(),
      userId: row.userId,
      reason: 'logout',
    })
}

/** Ends every session of a user and every access token issued to it so far (logout, no refresh token). */
export function logoutEverywhere(deps: AuthDeps, userId: string, tenantId: string): void {
  revokeTokens(deps, {
    at: deps.clock.now().toISOString(),
    where: eq(refreshTokens.userId, userId),
  })
  recordRevocation(deps, { userId, tenantId, reason: 'logout' })
}

function revokeFamily(
  deps: AuthDeps,
  {
    familyId,
    at,
    userId,
    reason = 'refresh_reuse',
  }: { familyId: string; at: string; userId: string; reason?: 'logout' | 'refresh_reuse' },
): void {
  revokeTokens(deps, { at, where: eq(refreshTokens.familyId, familyId) })
  const user = deps.db.orm
    .select({ tenantId: users.tenantId })
    .from(users)
    .where(eq(users.id, userId))
    .get()
  if (user) recordRevocation(deps, { userId, tenantId: user.tenantId, sessionId: familyId, reason })
}

/** Revokes the refresh tokens `where` selects that are not revoked yet. */
function revokeTokens(deps: AuthDeps, { at, where }: { at: string; where: SQL }): void {
  deps.db.write((orm) =>
    orm
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(and(where, isNull(refreshTokens.revokedAt)))
      .run(),
  )
}
