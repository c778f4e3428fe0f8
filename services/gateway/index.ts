import { AppError } from '../kernel/errors.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { isValidRequestId, newRequestId } from '../kernel/ids.ts'
import type { Logger } from '../kernel/log.ts'
import { appErrorResponse, problemResponse } from '../kernel/problem.ts'
import { bearerToken, type TokenVerifier } from '../kernel/tokens.ts'
import { isPublicRoute, serviceFor } from './routes.ts'

export interface GatewayOptions {
  discovery: Discovery
  tokens: TokenVerifier
  log: Logger
  version: string
  timeoutMs: number
}

/** Hop-by-hop and identity headers never passed through as the client sent them. */
const DROP = [
  'x-tenant-id',
  'x-user-id',
  'x-user-role',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'host',
]

/**
 * The gateway's request handler: JWT at the edge, identity headers replaced from the token,
 * request id kept or made, then the request forwarded to the owning service.
 */
export function createGateway(opts: GatewayOptions) {
  return {
    async fetch(request: Request): Promise<Response> {
      const given = request.headers.get('x-request-id')
      const requestId = isValidRequestId(given) ? given : newRequestId()
      const url = new URL(request.url)
      try {
        if (url.pathname === '/health') {
          return Response.json(
            { service: 'gateway', version: opts.version, status: 'ok', checks: {} },
            { headers: { 'x-request-id': requestId } },
          )
        }
        const service = serviceFor(url.pathname)
        if (!service) {
          return problemResponse(
            {
              status: 404,
              code: 'NOT_FOUND',
              detail: `no route for ${request.method} ${url.pathname}`,
            },
            requestId,
          )
        }
        const headers = new Headers(request.headers)
        for (const h of DROP) headers.delete(h)
        headers.set('x-request-id', requestId)
        if (!isPublicRoute(request.method, url.pathname)) {
          const actor = await opts.tokens.verify(bearerToken(request.headers.get('authorization')))
          headers.set('x-tenant-id', actor.tenantId)
          headers.set('x-user-id', actor.userId)
          headers.set('x-user-role', actor.role)
        }
        headers.set('x-request-deadline', String(Date.now() + opts.timeoutMs))
        const base = opts.discovery.pick(service)
        const upstream = await fetch(base + url.pathname + url.search, {
          method: request.method,
          headers,
          body: request.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(opts.timeoutMs),
        })
        const out = new Headers(upstream.headers)
        out.set('x-request-id', requestId)
        return new Response(upstream.body, { status: upstream.status, headers: out })
      } catch (err) {
        if (err instanceof AppError) return appErrorResponse(err, requestId)
        if ((err as Error).name === 'TimeoutError') {
          return problemResponse(
            { status: 504, code: 'TIMEOUT', detail: 'the upstream service did not answer in time' },
            requestId,
          )
        }
        opts.log.warn('upstream failed', { request_id: requestId, error: (err as Error).message })
        return problemResponse(
          { status: 502, code: 'BAD_GATEWAY', detail: 'the upstream service is unreachable' },
          requestId,
        )
      }
    },
  }
}
