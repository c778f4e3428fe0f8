import { findRoute } from '../../schema/routes.ts'
import type { ServiceContext } from './context.ts'
import { assertEntitled } from './entitlements.ts'
import type { createIdempotency } from './idempotency.ts'
import {
  assertHeadersAgree,
  assertTenantsKnown,
  platformReader,
  writesWhileSuspendedRefused,
} from './request-guards.ts'
import { type Action, type Actor, assertCan } from './roles.ts'
import { assertTenantHere, tenantOfCall } from './tenant-owner.ts'
import { bearerToken } from './tokens.ts'

/**
 * `idempotent: true` on a create: Stripe's Idempotency-Key semantics, keyed per caller's
 * tenant and route pattern (services/kernel/idempotency.ts). Runs after auth and validation.
 * Answer fields that are secrets shown once (`shownOnce` in schema/routes.ts, or
 * `{ shownOnce: ['key'] }` here) are never stored: a replay leaves them out and says so.
 */
export function idempotentMacro({
  ctx,
  idem,
}: {
  ctx: ServiceContext<unknown>
  idem: ReturnType<typeof createIdempotency>
}) {
  return (on: boolean | { shownOnce: readonly string[] }) =>
    on
      ? {
          async beforeHandle(c: {
            request: Request
            route: string
            params?: unknown
            query?: unknown
            body?: unknown
          }) {
            const actor = await ctx.tokens.verify(
              bearerToken(c.request.headers.get('authorization')),
            )
            const answer = await idem.begin({
              request: c.request,
              tenantId: actor.tenantId,
              route: `${c.request.method} ${c.route}`,
              params: c.params,
              query: c.query,
              body: c.body,
              shownOnce:
                typeof on === 'object'
                  ? on.shownOnce
                  : findRoute(c.request.method, new URL(c.request.url).pathname)?.shownOnce,
            })
            // A streamed body was spooled while hashed: the route reads it from there.
            if (answer instanceof Request) c.request = answer
            else return answer
          },
          async afterHandle(c: {
            request: Request
            response?: unknown
            set: { status?: number | string; headers?: Record<string, string | number> }
          }) {
            if (!idem.claimed(c.request)) return
            const value = c.response
            const status = typeof c.set.status === 'number' ? c.set.status : 200
            const location = c.set.headers?.location
            await idem.settle(
              c.request,
              value instanceof Response
                ? value
                : new Response(JSON.stringify(value ?? null), {
                    status,
                    headers: {
                      'content-type': 'application/json',
                      ...(location ? { location: String(location) } : {}),
                    },
                  }),
            )
          },
        }
      : {}
}

/**
 * `auth: '<action>'` on a route: the bearer token verified again (the gateway's check is not
 * trusted alone), the role allowed the action, the tenant known and here, and a suspended
 * tenant's writes refused unless `suspendedWrites` is 'allow'. Gives the route its `actor`.
 */
export function authMacro({
  ctx,
  suspendedWrites,
}: {
  ctx: ServiceContext<unknown>
  suspendedWrites: 'refuse' | 'allow'
}) {
  return (action: Action) => ({
    // Runs before body validation, so a request without a valid token is a 401 whatever
    // its body; the verified token is cached, so resolve's second look is cheap.
    async transform({
      request,
      params,
      query,
      body,
    }: {
      request: Request
      params?: unknown
      query?: unknown
      body?: unknown
    }) {
      const synced = platformReader(ctx, request, action)
      if (synced) return
      const actor = await ctx.tokens.verify(bearerToken(request.headers.get('authorization')))
      assertHeadersAgree(request.headers, actor)
      assertCan(actor, action)
      // Another instance's tenant is refused before its existence is asked: this instance
      // knows only its own tenants.
      assertTenantHere(ctx.ownership, tenantOfCall(actor.tenantId, [params, query, body]))
      await assertTenantsKnown(ctx, actor, [params, query, body])
      if (suspendedWrites === 'refuse' && writesWhileSuspendedRefused(ctx, request, actor)) {
        assertEntitled(ctx.registry, actor.tenantId, { write: true })
      }
    },
    async resolve({ request }: { request: Request }): Promise<{ actor: Actor }> {
      const synced = platformReader(ctx, request, action)
      if (synced) return { actor: synced }
      const actor = await ctx.tokens.verify(bearerToken(request.headers.get('authorization')))
      assertHeadersAgree(request.headers, actor)
      assertCan(actor, action)
      return { actor }
    },
  })
}
