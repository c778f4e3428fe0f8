import { t } from 'elysia'
import { RemovedUsers } from '../../schema/peers.ts'
import { created, createRoute } from '../kernel/create-route.ts'
import { tenantFor } from '../kernel/roles.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { assertPerson } from './api-keys.ts'
import { CreatedUser, CreateUserBody, Role, UserList } from './model.ts'
import type { AuthDeps } from './service.ts'
import {
  changeUserRole,
  countUsers,
  createUser,
  listUsers,
  removeTenantUsers,
  removeUser,
} from './users.ts'

/** The users of a tenant: create or invite, list, count, change a role, remove (one, or all on erasure). */
export function userRoutes({ app, deps }: { app: ServiceApp; deps: AuthDeps }) {
  return app
    .post(
      '/api/v1/auth/users',
      async ({ body, actor, set }) => {
        assertPerson(actor)
        return created(set, await createUser(deps, actor, body))
      },
      createRoute({
        body: CreateUserBody,
        created: CreatedUser,
        detail: {
          summary: 'Create a user or an invitation in a tenant',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      }),
    )
    .get(
      '/api/v1/auth/users',
      ({ query, actor }) => {
        assertPerson(actor)
        return { data: listUsers(deps, actor, query.tenant_id) }
      },
      {
        auth: 'admin',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: UserList },
        detail: {
          summary: 'List the users of a tenant',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      '/api/v1/auth/users/count',
      ({ query, actor }) => {
        const tenantId = tenantFor(actor, query.tenant_id ?? null)
        return { tenant_id: tenantId, users: countUsers(deps, tenantId) }
      },
      {
        auth: 'read',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: t.Object({ tenant_id: t.String(), users: t.Integer() }) },
        detail: {
          summary: 'How many users a tenant has (plan usage)',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .patch(
      '/api/v1/auth/users/:id',
      ({ params, body, actor }) => {
        assertPerson(actor)
        return changeUserRole(deps, { actor, id: params.id, role: body.role })
      },
      {
        auth: 'admin',
        body: t.Object({ role: Role }),
        response: { 200: UserList.properties.data.items },
        detail: {
          summary: "Change a user's role (their tokens end; the next refresh has the new role)",
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .delete(
      '/api/v1/auth/users/:id',
      ({ params, actor, set }) => {
        assertPerson(actor)
        removeUser(deps, actor, params.id)
        set.status = 204
      },
      {
        auth: 'admin',
        detail: { summary: 'Remove a user', tags: ['auth'], security: [{ bearer: [] }] },
      },
    )
    .delete(
      '/api/v1/auth/tenants/:tenant_id/users',
      ({ params, actor }) => {
        assertPerson(actor)
        return { removed: removeTenantUsers(deps, params.tenant_id) }
      },
      {
        auth: 'operator',
        response: { 200: RemovedUsers },
        detail: {
          summary: 'Remove every user of a tenant (tenant erasure)',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
}
