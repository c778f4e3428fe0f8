import { MethodNotAllowed } from '../../schema/errors.ts'
import { allowedMethods, BODY_LIMITS, type BodySizes, findRoute } from '../../schema/routes.ts'
import type { ServiceName } from '../kernel/context.ts'
import { AppError } from '../kernel/errors.ts'
import type { Hop } from '../kernel/hop.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { isValidRequestId, newRequestId } from '../kernel/ids.ts'
import type { Logger } from '../kernel/log.ts'
import { storageError } from '../kernel/problem.ts'
import type { TokenVerifier } from '../kernel/tokens.ts'
import { admitCaller, type Call, createGate, forwardedBody } from './admit.ts'
import { BreakerOpen, type BreakerOptions, upstreamBreakers } from './breaker.ts'
import { budgetOf, decodePath, resolvePath, tooLarge } from './checks.ts'
import { createConnectionCap, type PeerServer } from './connections.ts'
import { createObserver } from './observe.ts'
import { createOpenApi } from './openapi.ts'
import { OWN_PATHS, ownAnswers } from './own.ts'
import { createRateLimiter, type RateLimiter } from './rate-limit.ts'
import { assertRequestSize, raiseRuntimeHeadLimit } from './request-size.ts'
import { errorResponse, setRateHeaders, withHeaders } from './respond.ts'
import { routedServices, routeLabel, serviceFor } from './routes.ts'
import { traceIdOf, traceparentFor } from './trace.ts'
import { createUpstream, type LocalService } from './upstream.ts'

export interface GatewayOptions {
  discovery: Discovery
  /** Signs the client address the gateway forwards (X-Forwarded-For) for the services. */
  hop?: Hop
  tokens: TokenVerifier
  log: Logger
  version: string
  /** The route budget (ms): the longest any request may take; clients may ask for less. */
  timeoutMs: number
  /** The budget of bulk routes (statement upload, exports); defaults to timeoutMs. */
  bulkTimeoutMs?: number
  /** The tier of a tenant (from its placement); unknown → free. */
  tierOf?: (tenantId: string) => string | undefined
  /** Requests per second per tier, the bucket size factor, and per client IP (public routes). */
  rates?: { free: number; pro: number; enterprise: number; burstFactor: number; perIp: number }
  /** Bytes of the body limit classes of schema/routes.ts: default (1 MiB) and upload (20 MiB). */
  bodyLimit?: number
  uploadLimit?: number
  breaker?: Partial<BreakerOptions>
  /** Access log lines: batched JSON, consola's pretty output, or none. */
  accessLog?: 'json' | 'pretty' | 'off'
  /**
   * Services running in this process, dispatched with `handle(request)` instead of a TCP hop
   * (DESIGN §1). Same headers, deadline, breaker and metrics as over the network.
   */
  local?: Partial<Record<ServiceName, LocalService>>
  /** The text of /metrics: this process's registry unless workers sum theirs. */
  metricsText?: () => Promise<string>
  /** Where the token buckets live: this process's memory unless workers share them. */
  limiter?: RateLimiter
  /** How long the server keeps an idle connection, in seconds (130 unless said). */
  idleTimeoutS?: number
  /** Keep-alive connections one client address may hold open (connections.ts; 128). */
  connectionsPerAddress?: number
}

type Server = PeerServer

/** Identity, hop-by-hop and deadline headers: never passed on as the client sent them. */
const DROP = [
  'x-mmp-purpose',
  'x-mmp-hop',
  'x-tenant-id',
  'x-user-id',
  'x-user-role',
  'x-request-deadline',
  'x-request-timeout',
  'x-forwarded-for',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
]
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The gateway's request handler (a plain Bun.serve fetch, DESIGN §14): JWT at the edge with the
 * cached verifier, identity headers replaced from the token, tenant checks on path, query and
 * JSON body, per-tenant token buckets, a breaker per upstream, deadlines, request ids and
 * traceparent, then the request forwarded to an instance from discovery.
 */
export function createGateway(opts: GatewayOptions) {
  const rates = opts.rates ?? { free: 20, pro: 100, enterprise: 500, burstFactor: 2, perIp: 20 }
  const bodySizes: BodySizes = {
    default: opts.bodyLimit ?? BODY_LIMITS.default,
    upload: opts.uploadLimit ?? BODY_LIMITS.upload,
  }
  const limiter = opts.limiter ?? createRateLimiter()
  raiseRuntimeHeadLimit()
  const connections = createConnectionCap({
    perAddress: opts.connectionsPerAddress,
    idleMs: (opts.idleTimeoutS ?? 130) * 1000,
  })
  const observe = createObserver({ log: opts.log, accessLog: opts.accessLog ?? 'json' })
  const breakers = upstreamBreakers({ log: opts.log, observe, overrides: opts.breaker })
  const services = routedServices
  for (const s of services) observe.breaker(s, 'closed')
  const send = createUpstream({ discovery: opts.discovery, local: opts.local, observe })
  const openapi = createOpenApi({ discovery: opts.discovery, services, version: opts.version })

  const gate = createGate({ rates, tierOf: opts.tierOf, limiter, observe, tokens: opts.tokens })

  const own = ownAnswers({ opts, services, breakers, openapi })

  async function fetchHandler(request: Request, server?: Server): Promise<Response> {
    const started = performance.now()
    const call: Call = { limit: bodySizes.default }
    const given = request.headers.get('x-request-id')
    const rid = isValidRequestId(given) ? given : newRequestId()
    const url = request.url
    const pathStart = url.indexOf('/', url.indexOf('//') + 2)
    const queryStart = url.indexOf('?', pathStart)
    let path = queryStart < 0 ? url.slice(pathStart) : url.slice(pathStart, queryStart)
    // Routing and tenant checks see the path as the upstream will (dot segments resolved,
    // escapes decoded); the resolved but still escaped form is what is forwarded.
    let sendPath = path
    if (path.includes('/.') || path.includes('%')) {
      sendPath = resolvePath(path)
      path = decodePath(sendPath)
    }
    const method = request.method
    let service: ServiceName | undefined
    let status = 500
    let traceparent: string | undefined
    let response: Response
    try {
      // Over-long URLs and headers get a problem body here (414, 431): the runtime's own bare
      // 431 is raised far above these limits (request-size.ts).
      assertRequestSize(url, request.headers)
      if (method === 'GET' && OWN_PATHS.has(path)) {
        return await own(path, request, server, rid)
      }
      service = serviceFor(path)
      const ip = server?.requestIP(request)?.address ?? 'unknown'
      if (!service) {
        call.verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
        throw new AppError('NOT_FOUND', `no route for ${method} ${path}`)
      }
      const headers = new Headers(request.headers)
      for (const h of DROP) headers.delete(h)
      // A route the manifest does not list is still forwarded: it needs a token and gets the
      // default limit and budget, and the service answers for it.
      const route = findRoute(method, path)
      const allowed = route ? [] : allowedMethods(path)
      if (allowed.length && method !== 'HEAD' && method !== 'OPTIONS') {
        call.verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
        throw new MethodNotAllowed(method, path, allowed)
      }
      await admitCaller({
        gate,
        call,
        request,
        headers,
        access: route?.access ?? 'token',
        path,
        query: queryStart < 0 ? null : url.slice(queryStart + 1),
        ip,
      })
      headers.set('x-request-id', rid)
      headers.set('x-forwarded-for', ip)
      // The services believe the client address only under the gateway's signature.
      opts.hop?.sign(headers)
      traceparent = traceparentFor(request.headers.get('traceparent'), rid)
      headers.set('traceparent', traceparent)

      const body =
        BODY_METHODS.has(method) && request.body
          ? await forwardedBody({ request, body: request.body, route, bodySizes, call })
          : null

      const budget = budgetOf(
        request.headers.get('x-request-timeout'),
        request.headers.get('x-request-deadline'),
        route?.budget === 'bulk' ? (opts.bulkTimeoutMs ?? opts.timeoutMs) : opts.timeoutMs,
      )
      if (budget <= 0) throw new AppError('TIMEOUT', 'the request deadline has already passed')
      headers.set('x-request-deadline', String(Date.now() + budget))
      const breaker = breakers.of(service)
      const upstream = await breaker.execute(() =>
        send(service!, sendPath + (queryStart < 0 ? '' : url.slice(queryStart)), {
          method,
          headers,
          body,
          budget,
        }),
      )
      status = upstream.status
      response = withHeaders(upstream, rid, call.verdict)
    } catch (caught) {
      const err = call.streamOverLimit?.() ? tooLarge(call.limit) : caught
      if (!(err instanceof AppError) && !(err instanceof BreakerOpen) && !storageError(err))
        opts.log.error('gateway failure', { request_id: rid, error: (err as Error)?.message })
      response = errorResponse(err, rid, service)
      status = response.status
      if (call.verdict) setRateHeaders(response.headers, call.verdict)
    }
    const seconds = (performance.now() - started) / 1000
    const route = service ? routeLabel(path) : 'unknown'
    observe.request({ service: service ?? 'none', route, method, status, seconds })
    observe.access({
      request_id: rid,
      trace_id: traceparent ? traceIdOf(traceparent) : undefined,
      method,
      path,
      status,
      duration_ms: Math.round(seconds * 10_000) / 10,
      upstream: service,
      tenant_id: call.actor?.tenantId,
      user_id: call.actor?.userId,
    })
    // API answers carry tokens, invitation tokens and secrets: never cached, never sniffed.
    if (!response.headers.has('cache-control')) response.headers.set('cache-control', 'no-store')
    response.headers.set('x-content-type-options', 'nosniff')
    return response
  }

  return {
    /** Answers a request; a connection past its address's cap closes after the answer. */
    async fetch(request: Request, server?: Server): Promise<Response> {
      const keep = connections.admit(request, server)
      const response = await fetchHandler(request, server)
      if (!keep) response.headers.set('connection', 'close')
      return response
    },
    /** Breaker state per upstream, for tests and health pages. */
    breakerStates: () => breakers.states(),
  }
}

export { budgetOf }
