import { type Access, type BodySizes, type Route, tenantInPath } from '../../schema/routes.ts'
import { limitStream, readLimited } from '../kernel/body-limit.ts'
import { AppError, invalidField, RateLimited } from '../kernel/errors.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { isTenantId } from '../kernel/tenant-id.ts'
import { bearerToken, type TokenVerifier } from '../kernel/tokens.ts'
import { assertOwnTenant, tenantInBody, tooLarge } from './checks.ts'
import type { createObserver } from './observe.ts'
import type { RateLimiter, RateVerdict } from './rate-limit.ts'

/**
 * What the gateway learns of one request on its way through, read again when it fails: the
 * caller, its rate verdict (the error answer carries the rate headers too) and the body limit
 * with whether a streamed upload went past it (then the failure is a 413).
 */
export interface Call {
  actor?: Actor
  verdict?: RateVerdict
  limit: number
  streamOverLimit?: () => boolean
}

/** What admitting a caller needs: the buckets and their rates, the token verifier, metrics. */
export interface Gate {
  limiter: RateLimiter
  rates: { burstFactor: number; perIp: number }
  /** A tenant's tier, and the rate of each tier. */
  tierOf: (tenantId: string) => string
  tierRate: Record<string, number>
  observe: ReturnType<typeof createObserver>
  tokens: TokenVerifier
}

/**
 * The gate of a gateway: the rate of each tier, and a tenant's tier (the platform's is
 * enterprise; an unknown one free).
 */
export function createGate({
  rates,
  tierOf,
  limiter,
  observe,
  tokens,
}: {
  rates: { free: number; pro: number; enterprise: number; burstFactor: number; perIp: number }
  tierOf?: (tenantId: string) => string | undefined
  limiter: RateLimiter
  observe: ReturnType<typeof createObserver>
  tokens: TokenVerifier
}): Gate {
  const tierRate: Record<string, number> = {
    free: rates.free,
    pro: rates.pro,
    enterprise: rates.enterprise,
  }
  const tierOfTenant = (tenantId: string): string => {
    if (tenantId === 'platform') return 'enterprise'
    const tier = tierOf?.(tenantId)
    return tier && tier in tierRate ? tier : 'free'
  }
  return { limiter, rates, tierOf: tierOfTenant, tierRate, observe, tokens }
}

/**
 * Lets a caller through or throws: public and provider routes by client address, token routes by
 * the token's tenant (its tier's bucket), with the tenant the path and query name held to the
 * token's and the identity headers set from the token (DESIGN §5).
 */
export async function admitCaller({
  gate,
  call,
  request,
  headers,
  access,
  path,
  query,
  ip,
}: {
  gate: Gate
  call: Call
  request: Request
  /** The headers forwarded upstream. */
  headers: Headers
  access: Access
  path: string
  /** The query string without its `?`, or null. */
  query: string | null
  ip: string
}): Promise<void> {
  const { limiter, rates } = gate
  if (access !== 'token') {
    // Provider callbacks arrive in bursts from a few addresses and carry their own
    // per-request token, so the per-IP limit would only delay money being counted.
    call.verdict =
      access === 'provider'
        ? limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
        : limiter.take(`ip:${ip}`, rates.perIp, rates.burstFactor)
    if (!call.verdict.ok && access === 'public') {
      gate.observe.limited('ip', 'public')
      throw new RateLimited(call.verdict.retryAfter)
    }
    return
  }
  let actor: Actor
  try {
    actor = await gate.tokens.verify(bearerToken(request.headers.get('authorization')))
  } catch (err) {
    call.verdict = limiter.peek(`ip:${ip}`, rates.perIp, rates.burstFactor)
    throw err
  }
  call.actor = actor
  const tier = gate.tierOf(actor.tenantId)
  call.verdict = limiter.take(actor.tenantId, gate.tierRate[tier]!, rates.burstFactor)
  if (!call.verdict.ok) {
    gate.observe.limited('tenant', tier)
    throw new RateLimited(call.verdict.retryAfter)
  }
  // Client-sent identity headers are replaced below (DESIGN §5); a malformed tenant id is
  // still refused, as it is wherever a tenant id enters.
  const namedTenant = request.headers.get('x-tenant-id')
  if (namedTenant !== null && !isTenantId(namedTenant)) {
    throw invalidField('X-Tenant-ID', 'must match ^[a-z0-9][a-z0-9-]{1,62}$')
  }
  if (!isOperator(actor)) {
    assertOwnTenant(actor, tenantInPath(path))
    if (query !== null) {
      for (const named of new URLSearchParams(query).getAll('tenant_id'))
        assertOwnTenant(actor, named)
    }
  }
  headers.set('x-tenant-id', actor.tenantId)
  headers.set('x-user-id', actor.userId)
  headers.set('x-user-role', actor.role)
}

/**
 * The body to forward, held to its route's limit. A statement streams through to the parser,
 * counted: past the limit the stream fails and the answer is a 413, without the file ever being
 * held whole here. Every other body is small: read it counted (a chunked one has no
 * Content-Length), whatever its type and whoever sends it, and check the tenant it names.
 */
export async function forwardedBody({
  request,
  body,
  route,
  bodySizes,
  call,
}: {
  request: Request
  body: ReadableStream<Uint8Array>
  route: Route | undefined
  bodySizes: BodySizes
  call: Call
}): Promise<BodyInit> {
  const limit = bodySizes[route?.body ?? 'default']
  call.limit = limit
  const length = Number(request.headers.get('content-length') ?? -1)
  if (length > limit) throw tooLarge(limit)
  if (route?.body === 'upload') {
    const limited = limitStream(body, limit)
    call.streamOverLimit = limited.exceeded
    return limited.stream
  }
  const bytes = await readLimited(body, limit).catch((err) => {
    throw err instanceof AppError ? tooLarge(limit) : err
  })
  const isJson = request.headers.get('content-type')?.includes('json') ?? false
  const { actor } = call
  if (actor && !isOperator(actor) && isJson) assertOwnTenant(actor, tenantInBody(bytes))
  return bytes as Uint8Array<ArrayBuffer>
}
