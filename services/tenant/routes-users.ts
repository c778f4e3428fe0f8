import { UsageStats } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { created, createRoute } from '../kernel/create-route.ts'
import { wholeList } from '../kernel/lists.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { Invitation, InviteBody, UserList } from './model.ts'
import { callOf, secured } from './routes-common.ts'
import { tenantInPath } from './store.ts'
import { inviteUser, listTenantUsers, removeTenantUser, tenantUsage } from './users.ts'

/** A tenant's users (through auth) and its usage (from billing). */
export function userRoutes({ app, ctx }: { app: ServiceApp; ctx: ServiceContext }) {
  return app
    .post(
      '/api/v1/tenants/:tenant_id/users',
      async ({ params, actor, body, requestId, request, set }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        const call = callOf(actor, requestId, request)
        return created(set, await inviteUser({ ctx, call, actor, row, input: body }))
      },
      createRoute({
        body: InviteBody,
        created: Invitation,
        detail: secured('Invite a user (the token is accepted at /auth/accept-invite)'),
      }),
    )
    .get(
      '/api/v1/tenants/:tenant_id/users',
      async ({ params, actor, requestId, request }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        return wholeList(await listTenantUsers(ctx, callOf(actor, requestId, request), row.id))
      },
      {
        auth: 'admin',
        response: { 200: UserList },
        detail: secured("List a tenant's users"),
      },
    )
    .delete(
      '/api/v1/tenants/:tenant_id/users/:user_id',
      async ({ params, actor, requestId, request, set }) => {
        const row = tenantInPath(ctx, actor, params.tenant_id)
        await removeTenantUser(ctx, callOf(actor, requestId, request), row.id, params.user_id)
        set.status = 204
      },
      { auth: 'admin', detail: secured('Remove a user from a tenant') },
    )
    .get(
      '/api/v1/tenants/:tenant_id/usage',
      async ({ params, actor, requestId, request }) => {
        return tenantUsage(
          ctx,
          callOf(actor, requestId, request),
          tenantInPath(ctx, actor, params.tenant_id),
        )
      },
      {
        auth: 'read',
        response: { 200: UsageStats },
        detail: secured('Current usage and limits (from billing)'),
      },
    )
}
