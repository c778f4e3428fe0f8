import { lt } from 'drizzle-orm'
import { revocations } from '../../schema/auth/tables.ts'
import { type AuthRevokedEvent, topics } from '../../schema/events.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import type { Revocation } from '../kernel/tokens.ts'

export interface RevocationDeps {
  db: Db
  clock: Clock
  /** This process's verifier learns at once; other processes through the topic. */
  revokeLocally?: ((r: Revocation) => void) | undefined
  /** How long a revocation matters: the longest access-token lifetime (ttl + clock skew). */
  keepSeconds: number
}

/**
 * Kills the user's access tokens issued up to now (or only those of one session) everywhere:
 * stored, published on `mobilemoney.auth.revoked` through the outbox, and applied to this
 * process's verifier before the request returns.
 */
export function recordRevocation(
  deps: RevocationDeps,
  r: {
    userId: string
    tenantId: string
    sessionId?: string | null
    reason: AuthRevokedEvent['reason']
  },
): void {
  const beforeMs = deps.clock.nowMs()
  const data: AuthRevokedEvent = {
    user_id: r.userId,
    session_id: r.sessionId ?? null,
    before: beforeMs / 1000,
    reason: r.reason,
  }
  deps.db.write((orm) => {
    orm
      .delete(revocations)
      .where(lt(revocations.beforeMs, beforeMs - deps.keepSeconds * 1000))
      .run()
    orm
      .insert(revocations)
      .values({
        id: newId('evt'),
        userId: r.userId,
        sessionId: r.sessionId ?? null,
        beforeMs,
        reason: r.reason,
      })
      .run()
    emitEvent(deps.db, { topic: topics.authRevoked, tenantId: r.tenantId, data }, deps.clock)
  })
  deps.revokeLocally?.({ userId: r.userId, sessionId: r.sessionId ?? null, before: data.before })
}

/** Revocations that still matter (younger than the longest token lifetime), oldest first. */
export function currentRevocations(deps: RevocationDeps): AuthRevokedEvent[] {
  const since = deps.clock.nowMs() - deps.keepSeconds * 1000
  return deps.db.orm
    .select()
    .from(revocations)
    .all()
    .filter((r) => r.beforeMs >= since)
    .sort((a, b) => a.beforeMs - b.beforeMs)
    .map((r) => ({
      user_id: r.userId,
      session_id: r.sessionId,
      before: r.beforeMs / 1000,
      reason: r.reason as AuthRevokedEvent['reason'],
    }))
}
