import { and, eq, isNull, ne, or } from 'drizzle-orm'
import { invites, users } from '../../schema/auth/tables.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { AppError, Conflict, Forbidden } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { type Actor, isOperator, type Role, tenantFor } from '../kernel/roles.ts'
import { snakeFields } from '../kernel/snake.ts'
import { assertTenantId, PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { revokeTenantApiKeys } from './api-keys.ts'
import { hashToken, randomToken } from './issue.ts'
import { assertStrongPassword } from './password-policy.ts'
import { recordRevocation } from './revocations.ts'
import {
  type AuthDeps,
  hashPassword,
  issueSession,
  normaliseEmail,
  type Session,
} from './service.ts'

/**
 * The people of a tenant: created with a password or invited (and the invitation redeemed), listed,
 * counted against the plan's user limit, given another role, removed. Sign-in is service.ts's.
 */

/**
 * Creates a user in a tenant: with a password it is active at once, otherwise an invitation token
 * (single use, expiring) is returned for `accept-invite`. Admins manage their own tenant; the
 * operator any tenant. The plan's user limit holds here, whichever route led here (the tenant
 * service's invite, tenant creation, or this service's own route): counted in the same write
 * transaction as the insert, so concurrent creations cannot overshoot it.
 */
export async function createUser(
  deps: AuthDeps,
  actor: Actor,
  input: { tenant_id: string; email: string; role: Role; password?: string | undefined },
) {
  const tenantId = tenantFor(actor, assertTenantId(input.tenant_id))
  if (tenantId === PLATFORM_TENANT && !isOperator(actor)) throw new Forbidden()
  const email = normaliseEmail(input.email)
  if (input.password !== undefined)
    await assertStrongPassword(input.password, 'password', [email, tenantId])
  // An address in this tenant is the tenant's own business (409). An account elsewhere is not
  // told: an invitation of it answers as any other, and only its acceptance meets the account;
  // a user created with a password there is an account of its own, so it cannot be made.
  const taken = deps.db.orm
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.email, email),
        input.password === undefined
          ? eq(users.tenantId, tenantId)
          : or(eq(users.tenantId, tenantId), ne(users.status, 'invited')),
      ),
    )
    .get()
  if (taken) throw new Conflict(`a user with email ${email} already exists`)
  const id = newId('usr')
  const now = deps.clock.now()
  const hash = input.password ? await hashPassword(input.password) : null
  const invite = input.password ? null : randomToken()
  const expiresAt = new Date(now.getTime() + deps.inviteTtlSeconds * 1000).toISOString()
  deps.db.write((orm) => {
    if (tenantId !== PLATFORM_TENANT)
      assertEntitled(deps.registry, tenantId, {
        write: true,
        metric: 'users',
        adding: 1,
        ownUse: () => countUsers(deps, tenantId),
      })
    orm
      .insert(users)
      .values({
        id,
        tenantId,
        email,
        passwordHash: hash,
        role: input.role,
        status: invite ? 'invited' : 'active',
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      })
      .run()
    if (invite) {
      orm
        .insert(invites)
        .values({
          tokenHash: hashToken(invite),
          userId: id,
          expiresAt,
          createdAt: now.toISOString(),
        })
        .run()
    }
  })
  return {
    id,
    tenant_id: tenantId,
    email,
    role: input.role,
    status: invite ? 'invited' : 'active',
    ...(invite
      ? { invite_token: invite, invite_url: inviteUrl(deps, invite), expires_at: expiresAt }
      : {}),
  }
}

/** The dashboard page that redeems an invitation (the token rides in the fragment, never logged). */
export const inviteUrl = (deps: Pick<AuthDeps, 'publicUrl'>, token: string) =>
  `${deps.publicUrl}/#/accept?token=${encodeURIComponent(token)}`

/**
 * Changes a person's role in the actor's tenant (the operator: any tenant). Their access tokens
 * end at once, so the next refresh carries the new role; an Admin cannot change their own role,
 * which keeps every tenant with at least the Admin doing the change.
 */
export function changeUserRole(
  deps: AuthDeps,
  { actor, id, role }: { actor: Actor; id: string; role: Role },
) {
  const user = deps.db.orm.select().from(users).where(eq(users.id, id)).get()
  if (!user || (user.tenantId !== actor.tenantId && !isOperator(actor)))
    throw new AppError('NOT_FOUND', `user ${id} was not found`)
  if (user.id === actor.userId) throw new Conflict('you cannot change your own role')
  if (user.role === role) return publicUser(user)
  const now = deps.clock.now().toISOString()
  const changed = deps.db.write((orm) => {
    orm.update(users).set({ role, updatedAt: now }).where(eq(users.id, id)).run()
    return orm.select().from(users).where(eq(users.id, id)).get()
  })
  // The revocation reads as a logout of every session: the refresh token still works and the
  // session it gives carries the new role.
  recordRevocation(deps, { userId: id, tenantId: user.tenantId, reason: 'logout' })
  return publicUser(changed ?? user)
}

export function listUsers(deps: AuthDeps, actor: Actor, tenantIdParam: string | undefined) {
  const tenantId = tenantFor(actor, tenantIdParam ? assertTenantId(tenantIdParam) : undefined)
  return deps.db.orm.select().from(users).where(eq(users.tenantId, tenantId)).all().map(publicUser)
}

/** The columns a user answers with unchanged (the password hash never goes out). */
const USER_FIELDS = ['id', 'tenantId', 'email', 'status', 'createdAt'] as const

export function publicUser(u: typeof users.$inferSelect) {
  return { ...snakeFields(u, USER_FIELDS), role: u.role as Role }
}

/**
 * Removes a user of the actor's tenant (the operator: of any tenant) and ends its sessions; its
 * access tokens stop working at once in every process (`mobilemoney.auth.revoked`).
 */
export function removeUser(deps: AuthDeps, actor: Actor, id: string): void {
  const user = deps.db.orm.select().from(users).where(eq(users.id, id)).get()
  if (!user || (user.tenantId !== actor.tenantId && !isOperator(actor)))
    throw new AppError('NOT_FOUND', `user ${id} was not found`)
  if (user.id === actor.userId) throw new Conflict('you cannot remove yourself')
  deps.db.write((orm) => orm.delete(users).where(eq(users.id, id)).run())
  recordRevocation(deps, { userId: id, tenantId: user.tenantId, reason: 'removed' })
}

/**
 * Removes every user of a tenant (tenant deletion; operator only) and revokes its API keys.
 * Returns how many users.
 */
export function removeTenantUsers(deps: AuthDeps, tenantId: string): number {
  const removed = deps.db.write((orm) => {
    const ids = orm
      .select({ id: users.id })
      .from(users)
      .where(eq(users.tenantId, assertTenantId(tenantId)))
      .all()
    orm.delete(users).where(eq(users.tenantId, tenantId)).run()
    return ids
  })
  for (const u of removed) recordRevocation(deps, { userId: u.id, tenantId, reason: 'removed' })
  revokeTenantApiKeys(deps, tenantId)
  return removed.length
}

/** Redeems a single-use invitation: sets the password, activates the user, returns a session. */
export async function acceptInvite(
  deps: AuthDeps,
  token: string,
  password: string,
): Promise<Session> {
  const invite = deps.db.orm
    .select()
    .from(invites)
    .where(eq(invites.tokenHash, hashToken(token)))
    .get()
  const now = deps.clock.now()
  if (!invite || invite.usedAt || new Date(invite.expiresAt) <= now) {
    throw new AppError('UNAUTHENTICATED', 'the invitation is invalid, used or expired')
  }
  const invited = deps.db.orm
    .select({ email: users.email, tenantId: users.tenantId })
    .from(users)
    .where(eq(users.id, invite.userId))
    .get()
  await assertStrongPassword(password, 'password', invited ? [invited.email, invited.tenantId] : [])
  const hash = await hashPassword(password)
  const user = deps.db.write((orm) => {
    const claimed = orm
      .update(invites)
      .set({ usedAt: now.toISOString() })
      .where(and(eq(invites.tokenHash, invite.tokenHash), isNull(invites.usedAt)))
      .returning({ tokenHash: invites.tokenHash })
      .get()
    if (!claimed)
      throw new AppError('UNAUTHENTICATED', 'the invitation is invalid, used or expired')
    // The address may have an account in another tenant (the inviter was not told): the invitee
    // learns it here, and the invitation stays unused.
    const account = invited
      ? orm
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.email, invited.email), ne(users.status, 'invited')))
          .get()
      : undefined
    if (account && account.id !== invite.userId)
      throw new Conflict(
        `${invited?.email} already has an account: sign in with it, or ask for an invitation to another address`,
      )
    orm
      .update(users)
      .set({ passwordHash: hash, status: 'active', updatedAt: now.toISOString() })
      .where(eq(users.id, invite.userId))
      .run()
    return orm.select().from(users).where(eq(users.id, invite.userId)).get()
  })
  if (!user) throw new AppError('UNAUTHENTICATED', 'the invitation is invalid, used or expired')
  return issueSession(deps, user)
}

/** Users of a tenant, invited ones included: what the plan's user limit counts. */
export function countUsers(deps: AuthDeps, tenantId: string): number {
  return deps.db.orm
    .select({ id: users.id })
    .from(users)
    .where(eq(users.tenantId, assertTenantId(tenantId)))
    .all().length
}
