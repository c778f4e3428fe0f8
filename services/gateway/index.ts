import { MethodNotAllowed } from '../../schema/errors.ts'
import {
  allowedMethods,
  BODY_LIMITS,
  type BodySizes,
  findRoute,
  tenantInPath,
} from '../../schema/routes.ts'
import { limitStream, readLimited } from '../kernel/body-limit.ts'
import type { ServiceName } from '../kernel/context.ts'
import { AppError, Forbidden, invalidField, RateLimited } from '../kernel/errors.ts'
import type { Hop } from '../kernel/hop.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { isValidRequestId, newRequestId } from '../kernel/ids.ts'
import type { Logger } from '../kernel/log.ts'
import { metrics } from '../kernel/metrics.ts'
import { storageError } from '../kernel/problem.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import { bearerToken, type TokenVerifier } from '../kernel/tokens.ts'
import { createAsyncApi } from './asyncapi.ts'
import { BreakerOpen, type BreakerOptions, createBreakers } from './breaker.ts'
import {
  assertOwnTenant,
  budgetOf,
  decodePath,
  resolvePath,
  tenantInBody,
  tooLarge,
} from './checks.ts'
import { createConnectionCap, type PeerServer } from './connections.ts'
import { createObserver } from './observe.ts'
import { createOpenApi, docsPage } from './openapi.ts'
import { createRateLimiter, type RateLimiter, type RateVerdict } from './rate-limit.ts'
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
const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The gateway's request handler (a plain Bun.serve fetch, DESIGN §14): JWT at the edge with the
 * cached verifier, identity headers replaced from the token, tenant checks on path, query and
 * JSON body, per-tenant token buckets, a breaker per upstream, deadlines, request ids and
 * traceparent, then the request forwarded to an instance from discovery.
 */
export function createGateway(opts: GatewayOptions) {
  const rates = opts.rates ?? { free: 20, pro: 100, enterprise: 500, burstFactor: 2, perIp: 20 }
  const tierRate: Record<string, number> = {
    free: rates.free,
    pro: rates.pro,
    enterprise: rates.enterprise,
  }
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
  const breakerOpts: BreakerOptions = {
    threshold: 0.5,
    minRequests: 10,
    windowMs: 10_000,
    halfOpenMs: 5_000,
    ...opts.breaker,
  }
  const breakers = createBreakers(breakerOpts, {
    onChange(service, state) {
      observe.breaker(service, state)
      opts.log[state === 'closed' ? 'info' : 'warn'](`circuit breaker for ${service} is ${state}`, {
        upstream: service,
        state,
      })
    },
  })
  const services = routedServices
  for (const s of services) observe.breaker(s, 'closed')
  const send = createUpstream({ discovery: opts.discovery, local: opts.local, observe })
  const openapi = createOpenApi({ discovery: opts.discovery, services, version: opts.version })

  const tierOf = (tenantId: string): string => {
    if (tenantId === 'platform') return 'enterprise'
    const tier = opts.tierOf?.(tenantId)
    return tier && tier in tierRate ? tier : 'free'
  }

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

  async function own(path: string, request: Request, server: Server | undefined, rid: string) {
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

  async function fetchHandler(request: Request, server?: Server): Promise<Response> {
    const started = performance.now()
    /** Set when a streamed upload is counted: tells a failed hop that the body was too large. */
    let streamOverLimit: (() => boolean) | undefined
    let limit = bodySizes.default
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
    let actor: Actor | undefined
    let verdict: RateVerdict | undefined
    let status = 500
    let traceparent: string | undefined
    let response: Response
    try {
      // Over-long URLs and headers get a problem body here (414, 431): the runtime's own bare
      // 431 is raised far above these limits (request-size.ts).
      assertRequestSize(url, request.headers)
      if (
        method === 'GET' &&
        (path === '/health' ||
          path === '/metrics' ||
          path === '/openapi.json' ||
          path === '/asyncapi.json' ||
          path === '/docs')
      ) {
        return await own(path, request, server, rid)
      }
      service = serviceFor(path)
      const ip = server?.requestIP(request)?.address ?? 'unknown'
      if (!service) {
        verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
        throw new AppError('NOT_FOUND', `no route for ${method} ${path}`)
      }
      const headers = new Headers(request.headers)
      for (const h of DROP) headers.delete(h)
      // A route the manifest does not list is still forwarded: it needs a token and gets the
      // default limit and budget, and the service answers for it.
      const route = findRoute(method, path)
      const allowed = route ? [] : allowedMethods(path)
      if (allowed.length && method !== 'HEAD' && method !== 'OPTIONS') {
        verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
        throw new MethodNotAllowed(method, path, allowed)
      }
      const access = route?.access ?? 'token'
      if (access !== 'token') {
        // Provider callbacks arrive in bursts from a few addresses and carry their own
        // per-request token, so the per-IP limit would only delay money being counted.
        verdict =
          access === 'provider'
            ? limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
            : limiter.take(`ip:${ip}`, rates.perIp, rates.burstFactor)
        if (!verdict.ok && access === 'public') {
          observe.limited('ip', 'public')
          throw new RateLimited(verdict.retryAfter)
        }
      } else {
        try {
          actor = await opts.tokens.verify(bearerToken(request.headers.get('authorization')))
        } catch (err) {
          verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
          throw err
        }
        const tier = tierOf(actor.tenantId)
        verdict = limiter.take(actor.tenantId, tierRate[tier]!, rates.burstFactor)
        if (!verdict.ok) {
          observe.limited('tenant', tier)
          throw new RateLimited(verdict.retryAfter)
        }
        // Client-sent identity headers are replaced below (DESIGN §5); a malformed tenant id is
        // still refused, as it is wherever a tenant id enters.
        const namedTenant = request.headers.get('x-tenant-id')
        if (namedTenant !== null && !isTenantId(namedTenant)) {
          throw invalidField('X-Tenant-ID', 'must match ^[a-z0-9][a-z0-9-]{1,62}$')
        }
        if (!isOperator(actor)) {
          assertOwnTenant(actor, tenantInPath(path))
          if (queryStart >= 0) {
            for (const named of new URLSearchParams(url.slice(queryStart + 1)).getAll('tenant_id'))
              assertOwnTenant(actor, named)
          }
        }
        headers.set('x-tenant-id', actor.tenantId)
        headers.set('x-user-id', actor.userId)
        headers.set('x-user-role', actor.role)
      }
      headers.set('x-request-id', rid)
      headers.set('x-forwarded-for', ip)
      // The services believe the client address only under the gateway's signature.
      opts.hop?.sign(headers)
      traceparent = traceparentFor(request.headers.get('traceparent'), rid)
      headers.set('traceparent', traceparent)

      let body: BodyInit | null = null
      if (BODY_METHODS.has(method) && request.body) {
        const upload = route?.body === 'upload'
        limit = bodySizes[route?.body ?? 'default']
        const length = Number(request.headers.get('content-length') ?? -1)
        if (length > limit) throw tooLarge(limit)
        if (upload) {
          // A statement streams through to the parser, counted: past the limit the stream
          // fails and the answer is a 413, without the file ever being held whole here.
          const limited = limitStream(request.body, limit)
          streamOverLimit = limited.exceeded
          body = limited.stream
        } else {
          // Every other body is small: read it counted (a chunked one has no Content-Length),
          // whatever its type and whoever sends it, and check the tenant it names.
          const bytes = await readLimited(request.body, limit).catch((err) => {
            throw err instanceof AppError ? tooLarge(limit) : err
          })
          const isJson = request.headers.get('content-type')?.includes('json') ?? false
          if (actor && !isOperator(actor) && isJson) assertOwnTenant(actor, tenantInBody(bytes))
          body = bytes as Uint8Array<ArrayBuffer>
        }
      }

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
      response = withHeaders(upstream, rid, verdict)
    } catch (caught) {
      const err = streamOverLimit?.() ? tooLarge(limit) : caught
      if (!(err instanceof AppError) && !(err instanceof BreakerOpen) && !storageError(err))
        opts.log.error('gateway failure', { request_id: rid, error: (err as Error)?.message })
      response = errorResponse(err, rid, service)
      status = response.status
      if (verdict) setRateHeaders(response.headers, verdict)
    }
    const seconds = (performance.now() - started) / 1000
    const route = service ? routeLabel(path) : 'unknown'
    observe.request(service ?? 'none', route, method, status, seconds)
    observe.access({
      request_id: rid,
      trace_id: traceparent ? traceIdOf(traceparent) : undefined,
      method,
      path,
      status,
      duration_ms: Math.round(seconds * 10_000) / 10,
      upstream: service,
      tenant_id: actor?.tenantId,
      user_id: actor?.userId,
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
