import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { bodyLimitOf } from '../../schema/routes.ts'
import { limitStream, payloadTooLarge } from './body-limit.ts'
import type { ServiceContext } from './context.ts'
import { handoffRoutes } from './handoff-routes.ts'
import { createIdempotency } from './idempotency.ts'
import { normalizeDocument, type OpenApiDocument } from './openapi-document.ts'
import { carryPeer, type PeerServer } from './peer-address.ts'
import { appErrorResponse, problemResponse } from './problem.ts'
import { errorAnswerer, requestIdOf } from './service-errors.ts'
import { authMacro, idempotentMacro } from './service-macros.ts'

/** The plugin caches its document; so is its normalised copy (registered before the plugin). */
const normalized = new WeakMap<object, OpenApiDocument>()
function normalizedDocument(raw: OpenApiDocument): OpenApiDocument {
  const known = normalized.get(raw)
  if (known) return known
  const doc = normalizeDocument(raw)
  normalized.set(raw, doc)
  return doc
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
  const answerError = errorAnswerer({ ctx, limitOf, overLimit })
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
      .macro({ idempotent: idempotentMacro({ ctx, idem }) })
      .macro({ auth: authMacro({ ctx, suspendedWrites }) })
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

/** A service's app as `createServiceApp` makes it: what a group of routes is added to. */
export type ServiceApp = ReturnType<typeof createServiceApp>
