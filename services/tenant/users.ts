import type { CreatedUser, RemovedUsers, UsageStats, UserList } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { assertEntitled } from '../kernel/entitlements.ts'
import { Forbidden, LimitExceeded, NotFound } from '../kernel/errors.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { roleFrom, type TenantRow, termsOf } from './profile.ts'

/** What a downstream call forwards: the caller's token, request id and deadline. */
export interface CallInfo {
  token: string
  requestId: string
  deadline?: number | undefined
}

/** A user as auth answers for one it made (the shape is auth's, declared in schema/peers.ts). */
export type AuthUser = CreatedUser

const opts = (call: CallInfo) => ({
  token: call.token,
  requestId: call.requestId,
  deadline: call.deadline,
})

/** Users live in the auth service; the tenant service only asks it. */
export function createAuthUser(
  ctx: ServiceContext,
  call: CallInfo,
  body: { tenant_id: string; email: string; role: string; password?: string },
): Promise<AuthUser> {
  return ctx.client.call<AuthUser>('auth', '/api/v1/auth/users', {
    ...opts(call),
    method: 'POST',
    body,
  })
}

export async function listTenantUsers(
  ctx: ServiceContext,
  call: CallInfo,
  tenantId: string,
): Promise<UserList['data']> {
  const res = await ctx.client.call<UserList>('auth', '/api/v1/auth/users', {
    ...opts(call),
    query: { tenant_id: tenantId },
  })
  return res.data
}

/** Invites a user into a tenant, within the plan's user limit; the token is redeemed at auth. */
export async function inviteUser({
  ctx,
  call,
  actor,
  row,
  input,
}: {
  ctx: ServiceContext
  call: CallInfo
  actor: Actor
  row: TenantRow
  input: { email: string; role: string; password?: string | undefined }
}): Promise<AuthUser> {
  const role = roleFrom(input.role)
  if (row.status === 'suspended' && !isOperator(actor)) {
    throw new Forbidden(`tenant ${row.id} is suspended; only reads are allowed`)
  }
  assertEntitled(ctx.registry, row.id, { write: true })
  const limit = termsOf(row).users
  if (limit !== null) {
    const used = (await listTenantUsers(ctx, call, row.id)).length
    if (used >= limit) throw new LimitExceeded('users', limit, used)
  }
  return createAuthUser(ctx, call, {
    tenant_id: row.id,
    email: input.email,
    role,
    ...(input.password ? { password: input.password } : {}),
  })
}

/** Removes one user, after checking it belongs to the tenant in the path (else 404). */
export async function removeTenantUser(
  ctx: ServiceContext,
  call: CallInfo,
  tenantId: string,
  userId: string,
): Promise<void> {
  const users = await listTenantUsers(ctx, call, tenantId)
  if (!users.some((u) => u.id === userId)) throw new NotFound('user', userId)
  await removeAuthUser(ctx, call, userId)
}

export async function removeAuthUser(
  ctx: ServiceContext,
  call: CallInfo,
  userId: string,
): Promise<void> {
  await ctx.client.call('auth', `/api/v1/auth/users/${encodeURIComponent(userId)}`, {
    ...opts(call),
    method: 'DELETE',
  })
}

export async function removeAllUsers(
  ctx: ServiceContext,
  call: CallInfo,
  tenantId: string,
): Promise<number> {
  const res = await ctx.client.call<RemovedUsers | null>(
    'auth',
    `/api/v1/auth/tenants/${tenantId}/users`,
    { ...opts(call), method: 'DELETE' },
  )
  return res?.removed ?? 0
}

/** Usage and limits come from billing, asked with the caller's token. */
export async function tenantUsage(ctx: ServiceContext, call: CallInfo, row: TenantRow) {
  const usage = await ctx.client.call<UsageStats>(
    'billing',
    `/api/v1/billing/usage/${row.id}`,
    opts(call),
  )
  return { ...usage, tenant_id: row.id }
}
