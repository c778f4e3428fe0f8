import { t } from 'elysia'
import { exportJWK, importSPKI } from 'jose'
import { RemovedUsers } from '../../schema/peers.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { Forbidden, Unauthenticated } from '../kernel/errors.ts'
import { type PeerServer, peerAddress } from '../kernel/peer-address.ts'
import { tenantFor } from '../kernel/roles.ts'
import { createServiceApp } from '../kernel/service.ts'
import { API_KEY_LOOKUP, bearerToken, isApiKey, TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import { assertPerson, createApiKey, listApiKeys, resolveApiKey, revokeApiKey } from './api-keys.ts'
import {
  AcceptInviteBody,
  ApiKeyGrantOut,
  ApiKeyList,
  CreateApiKeyBody,
  CreatedApiKey,
  CreatedUser,
  CreateUserBody,
  Jwks,
  LoginBody,
  LogoutBody,
  Me,
  RefreshBody,
  RevocationList,
  Role,
  TokenResponse,
  UserList,
} from './model.ts'
import { currentRevocations } from './revocations.ts'
import {
  type AuthDeps,
  acceptInvite,
  changeUserRole,
  countUsers,
  createUser,
  listUsers,
  login,
  removeTenantUsers,
  removeUser,
} from './service.ts'
import { logout, logoutEverywhere, refreshSession } from './sessions.ts'

/**
 * The client's address for login throttling: the gateway's X-Forwarded-For when the gateway
 * signed it (its hop), otherwise the socket's peer, so a client counts in one bucket whichever
 * door it knocks at (the gateway, the auth port, any worker). A direct caller of the auth port
 * cannot pick its own throttle key by sending the header.
 */
function clientIp(ctx: ServiceContext, request: Request, server: PeerServer | null): string {
  const forwarded = ctx.hop?.trusted(request.headers, 'x-forwarded-for')
  const first = forwarded?.split(',')[0]?.trim()
  return first || peerAddress(request, server) || 'in-process'
}

export async function createAuthApp(ctx: ServiceContext, deps: AuthDeps, publicKeyPem: string) {
  const key = await exportJWK(
    await importSPKI(publicKeyPem, TOKEN_ALGORITHM, { extractable: true }),
  )
  const jwk = {
    kty: String(key.kty),
    crv: String(key.crv),
    x: String(key.x),
    alg: TOKEN_ALGORITHM,
    use: 'sig',
    kid: 'mmp-1',
  }
  return createServiceApp(ctx, {
    title: 'Auth',
    description: 'Login, tokens, users and invitations',
  })
    .post(
      '/api/v1/auth/login',
      ({ body, request, server }) =>
        login(deps, body.email, body.password, clientIp(ctx, request, server)),
      {
        body: LoginBody,
        response: { 200: TokenResponse },
        detail: {
          summary: 'Log in with email and password',
          description:
            'Repeated failures for one email from one address are refused with 429 and Retry-After.',
          tags: ['auth'],
        },
      },
    )
    .post('/api/v1/auth/refresh', ({ body }) => refreshSession(deps, body.refresh_token), {
      body: RefreshBody,
      response: { 200: TokenResponse },
      detail: {
        summary: 'Trade a refresh token for a new session (the old one stops working)',
        description:
          'Refresh tokens rotate: each works once. Presenting a used one revokes every token of its session.',
        tags: ['auth'],
      },
    })
    .post(
      '/api/v1/auth/logout',
      async ({ body, request, set }) => {
        if (body?.refresh_token) logout(deps, body.refresh_token)
        else {
          // No refresh token: the bearer's user is signed out of every session.
          const actor = await ctx.tokens.verify(bearerToken(request.headers.get('authorization')))
          assertPerson(actor)
          logoutEverywhere(deps, actor.userId, actor.tenantId)
        }
        set.status = 204
      },
      {
        body: t.Optional(LogoutBody),
        detail: {
          summary: 'End the session of a refresh token',
          description:
            'With `refresh_token`, that session (its token family) ends, with the access tokens issued in it. Without it, a bearer token is required and every session and access token of its user ends. Revoked access tokens answer 401 everywhere at once.',
          tags: ['auth'],
        },
      },
    )
    .get(
      '/api/v1/auth/me',
      ({ actor }) => ({ user_id: actor.userId, tenant_id: actor.tenantId, role: actor.role }),
      {
        auth: 'read',
        response: { 200: Me },
        detail: {
          summary: 'Who the bearer token belongs to',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      '/api/v1/auth/revocations',
      () => ({ data: currentRevocations(deps), keep_seconds: deps.keepSeconds }),
      {
        auth: 'operator',
        response: { 200: RevocationList },
        detail: {
          summary: 'Access tokens revoked and not yet expired (removed users, logouts)',
          description:
            'What every process loads at start; later revocations arrive on `mobilemoney.auth.revoked`.',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get('/api/v1/auth/.well-known/jwks.json', () => ({ keys: [jwk] }), {
      response: { 200: Jwks },
      detail: { summary: 'Public keys that verify access tokens', tags: ['auth'] },
    })
    .post(
      '/api/v1/auth/users',
      async ({ body, actor, set }) => {
        assertPerson(actor)
        set.status = 201
        return createUser(deps, actor, body)
      },
      {
        auth: 'admin',
        idempotent: true,
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
        return changeUserRole(deps, actor, params.id, body.role)
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
    .post(
      '/api/v1/auth/api-keys',
      ({ body, actor, set }) => {
        set.status = 201
        return createApiKey(deps, actor, body)
      },
      {
        auth: 'admin',
        idempotent: true,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey },
        detail: {
          summary: 'Create a secret API key for a server (the key is shown once)',
          description:
            "`Authorization: Bearer mmp_sk_…` then acts like a token of the key's tenant and role. Keys cannot manage keys or users. 402 FEATURE_DISABLED without the plan's `api_access`.",
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      '/api/v1/auth/api-keys',
      ({ query, actor }) => ({ data: listApiKeys(deps, actor, query.tenant_id) }),
      {
        auth: 'admin',
        query: t.Object({ tenant_id: t.Optional(t.String()) }),
        response: { 200: ApiKeyList },
        detail: {
          summary: "List a tenant's live API keys (never the key)",
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .get(
      '/api/v1/auth/api-keys/current',
      ({ request }) => {
        const key = bearerToken(request.headers.get('authorization'))
        if (ctx.hop?.trusted(request.headers, PURPOSE_HEADER) !== API_KEY_LOOKUP)
          throw new Forbidden('only the platform looks API keys up here')
        const grant = isApiKey(key) ? resolveApiKey(deps, key) : null
        if (!grant) throw new Unauthenticated('the API key is invalid, revoked or expired')
        return {
          id: grant.id,
          tenant_id: grant.tenantId,
          role: grant.role,
          expires_at: grant.expiresAt === null ? null : new Date(grant.expiresAt).toISOString(),
        }
      },
      {
        response: { 200: ApiKeyGrantOut },
        detail: {
          summary: 'Describe the API key presented as the bearer (platform only, hop-signed)',
          description:
            'How a process without auth checks a key it was shown; refused (403) without the signed `X-MMP-Purpose: api-key-lookup`.',
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      },
    )
    .delete(
      '/api/v1/auth/api-keys/:id',
      ({ params, actor, set }) => {
        revokeApiKey(deps, actor, params.id)
        set.status = 204
      },
      {
        auth: 'admin',
        detail: {
          summary: 'Revoke an API key (it stops at once everywhere)',
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
