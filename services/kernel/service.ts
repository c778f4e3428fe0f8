import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { allowedMethods, bodyLimitOf, findRoute } from '../../schema/routes.ts'
import { limitStream, payloadTooLarge } from './body-limit.ts'
import type { ServiceContext } from './context.ts'
import { assertEntitled, INVOICE_PAYMENT, PURPOSE_HEADER } from './entitlements.ts'
import { AppError, Forbidden, MethodNotAllowed } from './errors.ts'
import { handoffRoutes } from './handoff-routes.ts'
import { createIdempotency } from './idempotency.ts'
import { isValidRequestId, newRequestId } from './ids.ts'
import { normalizeDocument, type OpenApiDocument } from './openapi-document.ts'
import { carryPeer, type PeerServer } from './peer-address.ts'
import {
  appErrorResponse,
  fieldErrorsOf,
  problemResponse,
  queryParameterOf,
  type SchemaIssue,
  storageError,
} from './problem.ts'
import {
  assertHeadersAgree,
  assertTenantsKnown,
  platformReader,
  writesWhileSuspendedRefused,
} from './request-guards.ts'
import { type Action, type Actor, assertCan, isOperator } from './roles.ts'
import { assertTenantId } from './tenant-id.ts'
import { assertTenantHere, tenantOfCall } from './tenant-owner.ts'
import { bearerToken } from './tokens.ts'

/** What the error hook is given (the parts read here). */
interface ErrorContext {
  code: string | number
  error: unknown
  request: Request
  [key: string]: unknown
}

/** The plugin caches its document; so is its normalised copy (registered before the plugin). */
const normalized = new WeakMap<object, OpenApiDocument>()
function normalizedDocument(raw: OpenApiDocument): OpenApiDocument {
  const known = normalized.get(raw)
  if (known) return known
  const doc = normalizeDocument(raw)
  normalized.set(raw, doc)
  return doc
}

function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id')
  return isValidRequestId(given) ? given : newRequestId()
}

/**
 * The base every service's Elysia app starts from: request id, problem+json errors (including
 * Elysia's validation, parse and not-found errors), `/health`, `/openapi.json`, and the `auth`
 * macro that verifies the bearer token again and checks the role (DESIGN §4–6). Each body is held
 * to its route's limit from the manifest (schema/routes.ts), counted on the stream.
 *
 * @example
 * export const createPaymentApp = (ctx: ServiceContext) =>
 *   createServiceApp(ctx, { title: 'Payments' })
 *     .get('/api/v1/payments/status/:id', ({ actor }) => ..., { auth: 'read' })
 */
export function createServiceApp(
  ctx: ServiceContext<unknown>,
  opts: {
    title: string
    description?: string
    /**
     * What a suspended tenant's writes get here (DESIGN §10): 'refuse' (402, the default) or
     * 'allow' for the service that is the way out of a suspension (billing: paying, upgrading).
     */
    suspendedWrites?: 'refuse' | 'allow'
  },
) {
  const suspendedWrites = opts.suspendedWrites ?? 'refuse'
  const limitOf = (request: Request) =>
    bodyLimitOf(ctx.name, request.method, new URL(request.url).pathname)
  /** Requests whose body stream went past its limit (their parse error is really a 413). */
  const overLimit = new WeakMap<Request, () => boolean>()
  const idem = createIdempotency(ctx)
  /** Every error as problem+json (DESIGN §6), Elysia's own included. */
  const answerError = ({ code, error, request, ...rest }: ErrorContext): Response => {
    const requestId = (rest as { requestId?: string }).requestId ?? requestIdOf(request)
    if (error instanceof AppError) return appErrorResponse(error, requestId)
    if (overLimit.get(request)?.())
      return appErrorResponse(payloadTooLarge(limitOf(request)), requestId)
    const storage = storageError(error)
    if (storage) {
      ctx.log.warn('storage error', {
        request_id: requestId,
        path: new URL(request.url).pathname,
        code: storage.code,
        error: (error as Error)?.message,
      })
      return appErrorResponse(storage, requestId)
    }
    switch (code) {
      case 'VALIDATION': {
        const v = error as unknown as { type?: string; value?: unknown; all: SchemaIssue[] }
        // A numeric query value that fails its bounds arrives as type 'property' with no name:
        // the parameter is found by its value.
        const whole =
          v.type === 'property' ? queryParameterOf(request, v.value) : `(${v.type ?? 'body'})`
        const errors = fieldErrorsOf(v.all ?? [], whole)
        return problemResponse(
          {
            status: 422,
            code: 'VALIDATION_FAILED',
            detail:
              errors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'the request is invalid',
            errors,
          },
          requestId,
        )
      }
      case 'PARSE':
        return problemResponse(
          {
            status: 400,
            code: 'MALFORMED_BODY',
            detail: 'the request body could not be parsed',
          },
          requestId,
        )
      case 'NOT_FOUND': {
        const path = new URL(request.url).pathname
        const allowed = allowedMethods(path)
        if (allowed.length)
          return appErrorResponse(new MethodNotAllowed(request.method, path, allowed), requestId)
        return problemResponse(
          { status: 404, code: 'NOT_FOUND', detail: `no route for ${request.method} ${path}` },
          requestId,
        )
      }
      default: {
        const status = (error as { status?: number }).status
        if (typeof status === 'number' && status >= 400 && status < 500) {
          return problemResponse(
            {
              status,
              code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST',
              detail: String((error as Error).message ?? 'bad request'),
            },
            requestId,
          )
        }
        ctx.log.error('unhandled error', {
          request_id: requestId,
          path: new URL(request.url).pathname,
          error: (error as Error)?.message,
          stack: (error as Error)?.stack,
        })
        return problemResponse(
          { status: 500, code: 'INTERNAL', detail: 'an internal error occurred' },
          requestId,
        )
      }
    }
  }
  return (
    new Elysia({ name: `mmp-${ctx.name}` })
      .onAfterHandle({ as: 'global' }, ({ path, response }) => {
        if (path === '/openapi.json') return normalizedDocument(response as OpenApiDocument)
      })
      .use(
        openapi({
          path: '/docs',
          specPath: '/openapi.json',
          provider: null,
          documentation: {
            info: {
              title: `mmp ${opts.title}`,
              version: ctx.version,
              description: opts.description ?? '',
            },
            components: {
              securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
            },
          },
          exclude: { paths: ['/health', '/openapi.json'], staticFile: false },
        }),
      )
      .derive({ as: 'global' }, ({ request }) => ({ requestId: requestIdOf(request) }))
      .onRequest((context) => {
        const { request } = context
        const limit = limitOf(request)
        const length = Number(request.headers.get('content-length') ?? 0)
        if (length > limit) return appErrorResponse(payloadTooLarge(limit), requestIdOf(request))
        // The limit holds on the stream too, for a chunked body (no Content-Length) of any type
        // from any caller (DESIGN §15): past it the read fails and the answer is a 413.
        if (request.body) {
          const limited = limitStream(request.body, limit)
          const replaced = new Request(request.url, {
            method: request.method,
            headers: request.headers,
            body: limited.stream,
            duplex: 'half',
          } as RequestInit)
          overLimit.set(replaced, limited.exceeded)
          carryPeer(request, replaced, (context as { server?: PeerServer | null }).server)
          ;(context as { request: Request }).request = replaced
        }
        // The caller's budget is spent: answering now is pointless (DESIGN §5 deadlines).
        const deadline = Number(request.headers.get('x-request-deadline') ?? 0)
        if (deadline > 0 && deadline <= Date.now()) {
          return problemResponse(
            {
              status: 504,
              code: 'TIMEOUT',
              detail: 'the request deadline passed before it was served',
            },
            requestIdOf(request),
          )
        }
      })
      .onAfterHandle({ as: 'global' }, ({ set, requestId }) => {
        set.headers['x-request-id'] = requestId
      })
      // A create that claimed an Idempotency-Key keeps its error answer too (a 5xx frees the key).
      .onError({ as: 'global' }, (c) => idem.settle(c.request, answerError(c)))
      .macro({
        /**
         * `idempotent: true` on a create: Stripe's Idempotency-Key semantics, keyed per caller's
         * tenant and route pattern (services/kernel/idempotency.ts). Runs after auth and validation.
         * Answer fields that are secrets shown once (`shownOnce` in schema/routes.ts, or
         * `{ shownOnce: ['key'] }` here) are never stored: a replay leaves them out and says so.
         */
        idempotent: (on: boolean | { shownOnce: readonly string[] }) =>
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
                  set: { status?: number | string }
                }) {
                  if (!idem.claimed(c.request)) return
                  const value = c.response
                  const status = typeof c.set.status === 'number' ? c.set.status : 200
                  await idem.settle(
                    c.request,
                    value instanceof Response
                      ? value
                      : new Response(JSON.stringify(value ?? null), {
                          status,
                          headers: { 'content-type': 'application/json' },
                        }),
                  )
                },
              }
            : {},
      })
      .macro({
        auth: (action: Action) => ({
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
        }),
      })
      .get(
        '/health',
        async () => {
          const checks: Record<string, { status: string; detail?: string }> = {}
          let status: 'ok' | 'degraded' | 'down' = 'ok'
          for (const [name, check] of ctx.checks) {
            try {
              checks[name] = await check()
            } catch (err) {
              checks[name] = { status: 'down', detail: (err as Error).message }
            }
            if (checks[name]!.status !== 'ok') status = 'degraded'
          }
          return { service: ctx.name, version: ctx.version, status, checks }
        },
        { detail: { hide: true } },
      )
      // A tenant moving between instances of a partitioned service, and its events replayed.
      .use(handoffRoutes(ctx))
  )
}
