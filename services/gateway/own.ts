import { Forbidden } from '../kernel/errors.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { metrics } from '../kernel/metrics.ts'
import { isOperator } from '../kernel/roles.ts'
import { bearerToken, type TokenVerifier } from '../kernel/tokens.ts'
import { createAsyncApi } from './asyncapi.ts'
import type { createBreakers } from './breaker.ts'
import type { PeerServer } from './connections.ts'
import { type createOpenApi, docsPage } from './openapi.ts'
import type { routedServices } from './routes.ts'

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/

/** The paths the gateway answers itself (to GET), never forwarded. */
export const OWN_PATHS: ReadonlySet<string> = new Set([
  '/health',
  '/metrics',
  '/openapi.json',
  '/asyncapi.json',
  '/docs',
])

/**
 * What the gateway answers itself: `/health` (each upstream's breaker and instances),
 * `/openapi.json` and `/asyncapi.json` (merged from the services), `/docs`, and `/metrics` (a
 * scraper on this host, otherwise the platform operator only).
 */
export function ownAnswers({
  opts,
  services,
  breakers,
  openapi,
}: {
  opts: {
    version: string
    discovery: Discovery
    tokens: TokenVerifier
    metricsText?: () => Promise<string>
  }
  services: typeof routedServices
  breakers: ReturnType<typeof createBreakers>
  openapi: ReturnType<typeof createOpenApi>
}) {
  const health = () => {
    const checks: Record<string, unknown> = {}
    let status: 'ok' | 'degraded' = 'ok'
    const states = breakers.states()
    for (const s of services) {
      const state = states[s] ?? 'closed'
      const instances = opts.discovery.status?.(s) ?? []
      const down =
        state !== 'closed' || (instances.length > 0 && instances.every((i) => !i.healthy))
      if (down) status = 'degraded'
      checks[s] = { status: down ? 'down' : 'ok', breaker: state, instances }
    }
    return { service: 'gateway', version: opts.version, status, checks }
  }

  async function own(path: string, request: Request, server: PeerServer | undefined, rid: string) {
    if (path === '/health') return Response.json(health(), { headers: { 'x-request-id': rid } })
    if (path === '/openapi.json')
      return Response.json(await openapi.document(), { headers: { 'x-request-id': rid } })
    if (path === '/asyncapi.json')
      return Response.json(createAsyncApi(opts.version), { headers: { 'x-request-id': rid } })
    if (path === '/docs')
      return new Response(docsPage, {
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy':
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
          'x-request-id': rid,
        },
      })
    // /metrics: open to a scraper on this host, otherwise the platform operator only.
    const peer = server?.requestIP(request)?.address ?? ''
    if (!LOOPBACK.test(peer)) {
      const actor = await opts.tokens.verify(bearerToken(request.headers.get('authorization')))
      if (!isOperator(actor)) throw new Forbidden('only the platform operator may read metrics')
    }
    return new Response(await (opts.metricsText?.() ?? metrics.metrics()), {
      headers: { 'content-type': metrics.contentType, 'x-request-id': rid },
    })
  }
  return own
}
