import { t } from 'elysia'
import { exportJWK, importSPKI } from 'jose'
import type { ServiceContext } from '../kernel/context.ts'
import { createServiceApp } from '../kernel/service.ts'
import { TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import {
  AcceptInviteBody,
  CreatedUser,
  CreateUserBody,
  LoginBody,
  TokenResponse,
  UserList,
} from './model.ts'
import {
  type AuthDeps,
  acceptInvite,
  createUser,
  listUsers,
  login,
  removeTenantUsers,
  removeUser,
} from './service.ts'

export async function createAuthApp(ctx: ServiceContext, deps: AuthDeps, publicKeyPem: string) {
  const jwk = {
    ...(await exportJWK(await importSPKI(publicKeyPem, TOKEN_ALGORITHM, { extractable: true }))),
    alg: TOKEN_ALGORITHM,
    use: 'sig',
    kid: 'mmp-1',
  }
  return createServiceApp(ctx, {
    title: 'Auth',
    description: 'Login, tokens, users and invitations',
  })
    .post('/api/v1/auth/login', ({ body }) => login(deps, body.email, body.password), {
      body: LoginBody,
      response: { 200: TokenResponse },
      detail: { summary: 'Log in with email and password', tags: ['auth'] },
    })
    .get('/api/v1/auth/.well-known/jwks.json', () => ({ keys: [jwk] }), {
      detail: { summary: 'Public keys that verify access tokens', tags: ['auth'] },
    })
    .post(
      '/api/v1/auth/users',
      async ({ body, actor, set }) => {
        set.status = 201
        return createUser(deps, actor, body)
      },
      {
        auth: 'admin',
        body: CreateUserBody,
        response: { 201: CreatedUser },
        detail: {
          summary: 'Create a user or an invitation in a tenant',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      '/api/v1/auth/users',
      ({ query, actor }) => ({ data: listUsers(deps, actor, query.tenant_id) }),
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
    .delete(
      '/api/v1/auth/users/:id',
      ({ params, actor, set }) => {
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
      ({ params }) => ({ removed: removeTenantUsers(deps, params.tenant_id) }),
      {
        auth: 'operator',
        detail: {
          summary: 'Remove every user of a tenant (tenant erasure)',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .post(
      '/api/v1/auth/accept-invite',
      ({ body }) => acceptInvite(deps, body.token, body.password),
      {
        body: AcceptInviteBody,
        response: { 200: TokenResponse },
        detail: { summary: 'Accept an invitation by setting a password', tags: ['auth'] },
      },
    )
}
