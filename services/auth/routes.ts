import { t } from 'elysia'
import { exportJWK, importSPKI } from 'jose'
import type { ServiceContext } from '../kernel/context.ts'
import { type PeerServer, peerAddress } from '../kernel/peer-address.ts'
import { createServiceApp, type ServiceApp } from '../kernel/service.ts'
import { bearerToken, TOKEN_ALGORITHM } from '../kernel/tokens.ts'
import { assertPerson } from './api-keys.ts'
import {
  AcceptInviteBody,
  Jwks,
  LoginBody,
  LogoutBody,
  Me,
  RefreshBody,
  RevocationList,
  TokenResponse,
} from './model.ts'
import { currentRevocations } from './revocations.ts'
import { apiKeyRoutes } from './routes-api-keys.ts'
import { userRoutes } from './routes-users.ts'
import { type AuthDeps, login } from './service.ts'
import { logout, logoutEverywhere, refreshSession } from './sessions.ts'
import { acceptInvite } from './users.ts'

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
  const app = createServiceApp(ctx, {
    title: 'Auth',
    description: 'Login, tokens, users and invitations',
  })
  sessionRoutes({ app, ctx, deps, jwk })
  userRoutes({ app, deps })
  apiKeyRoutes({ app, ctx, deps })
  return app
}

/** Logging in and out, refreshing, who the bearer is, revocations, the public keys, invitations. */
function sessionRoutes({
  app,
  ctx,
  deps,
  jwk,
}: {
  app: ServiceApp
  ctx: ServiceContext
  deps: AuthDeps
  jwk: (typeof Jwks.static)['keys'][number]
}) {
  return app
    .post(
      '/api/v1/auth/login',
      ({ body, request, server }) =>
        login(deps, {
          email: body.email,
          password: body.password,
          ip: clientIp(ctx, request, server),
        }),
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
      '/api/v1/auth/accept-invite',
      ({ body }) => acceptInvite(deps, body.token, body.password),
      {
        body: AcceptInviteBody,
        response: { 200: TokenResponse },
        detail: { summary: 'Accept an invitation by setting a password', tags: ['auth'] },
      },
    )
}
