import { t } from 'elysia'
import type { ServiceContext } from '../kernel/context.ts'
import { created, createRoute } from '../kernel/create-route.ts'
import { PURPOSE_HEADER } from '../kernel/entitlements.ts'
import { Forbidden, Unauthenticated } from '../kernel/errors.ts'
import type { ServiceApp } from '../kernel/service.ts'
import { API_KEY_LOOKUP, bearerToken, isApiKey } from '../kernel/tokens.ts'
import { createApiKey, listApiKeys, resolveApiKey, revokeApiKey } from './api-keys.ts'
import { ApiKeyGrantOut, ApiKeyList, CreateApiKeyBody, CreatedApiKey } from './model.ts'
import type { AuthDeps } from './service.ts'

/**
 * A tenant's secret API keys: create (shown once), list, revoke, and the platform's lookup of the
 * key a caller presents.
 */
export function apiKeyRoutes({
  app,
  ctx,
  deps,
}: {
  app: ServiceApp
  ctx: ServiceContext
  deps: AuthDeps
}) {
  return app
    .post(
      '/api/v1/auth/api-keys',
      ({ body, actor, set }) => created(set, createApiKey(deps, actor, body)),
      createRoute({
        body: CreateApiKeyBody,
        created: CreatedApiKey,
        detail: {
          summary: 'Create a secret API key for a server (the key is shown once)',
          description:
            "`Authorization: Bearer mmp_sk_…` then acts like a token of the key's tenant and role. Keys cannot manage keys or users. 402 FEATURE_DISABLED without the plan's `api_access`.",
          tags: ['auth'],
          security: [{ bearer: [] }],
        },
      }),
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
}
