import { FetchError, ofetch } from 'ofetch'
import { tenantInPath } from '../../schema/routes.ts'
import { type BackoffStep, exponentialBackoff, nextWait } from './backoff.ts'
import { AppError, type FieldError } from './errors.ts'
import { HOP_HEADER, type Hop } from './hop.ts'
import type { ServiceName } from './service-names.ts'
import { OWNER_HEADER, ownerOf } from './tenant-owner.ts'

/**
 * Where a service can be reached: the gateway and service clients ask this (DESIGN §1, §5).
 * Static config is one source; anything that can list base URLs (DNS SRV, Consul, a file
 * watched for changes) can implement the same three methods.
 *
 * @example
 * const discovery: Discovery = { pick: (s) => consulUrl(s), instances: (s) => consulAll(s) }
 */
export interface Discovery {
  /** One base URL for the next call (round robin over healthy instances). */
  pick(service: ServiceName): string
  /** Every configured instance. */
  instances(service: ServiceName): readonly string[]
  /**
   * Whether the service's instances each own a subset of tenants (DESIGN §12), so that a tenant's
   * requests go to its owner only (`instanceFor`); otherwise any instance serves any tenant.
   */
  partitioned?(service: ServiceName): boolean
  /**
   * The instance a tenant was moved to (`mmp tenant move --to`), from its profile: it wins over
   * the hash while it is one of the service's instances.
   */
  placed?(service: ServiceName, tenantId: string): string | undefined
  /** Report an instance's failure or recovery so it is skipped while unhealthy. */
  report?(service: ServiceName, baseUrl: string, ok: boolean): void
  /** Each instance and whether it is currently used, for health pages. */
  status?(service: ServiceName): Array<{ url: string; healthy: boolean }>
}

/**
 * Static discovery: a fixed list of base URLs per service. Several URLs for one service are
 * instances that each own a subset of tenants (`partitioned`, DESIGN §12): requests go to a
 * tenant's owner. `pick` rotates them round robin, for what any instance answers alike (its
 * OpenAPI document). An instance reported failing is skipped by `pick` for a back-off that doubles
 * with each consecutive failure (1 s up to 30 s) and is used again after one success. When every
 * instance is down the one that failed longest ago is tried, so a recovered service is found
 * without a restart.
 */
export function staticDiscovery(
  map: Partial<Record<ServiceName, readonly string[]>>,
  opts: {
    now?: () => number
    baseBackoffMs?: number
    maxBackoffMs?: number
    placed?: (service: ServiceName, tenantId: string) => string | undefined
  } = {},
): Discovery {
  const now = opts.now ?? Date.now
  const base = opts.baseBackoffMs ?? 1000
  const max = opts.maxBackoffMs ?? 30_000
  const next = new Map<ServiceName, number>()
  /** Exponential, without jitter: `base` doubling to `max` with each consecutive failure. */
  const policy = exponentialBackoff({ initialMs: base, maxMs: max })
  const down = new Map<string, { until: number; backoff: BackoffStep }>()
  const isUp = (url: string, at: number) => {
    const d = down.get(url)
    return d === undefined || d.until <= at
  }
  return {
    pick(service) {
      const list = map[service]
      if (!list || list.length === 0)
        throw new AppError('SERVICE_UNAVAILABLE', `no instance of ${service} is configured`)
      const start = next.get(service) ?? 0
      if (list.length === 1 || down.size === 0) {
        next.set(service, (start + 1) % list.length)
        return list[start % list.length]!
      }
      const at = now()
      let soonest = start % list.length
      for (let i = 0; i < list.length; i++) {
        const idx = (start + i) % list.length
        const url = list[idx]!
        if (isUp(url, at)) {
          next.set(service, (idx + 1) % list.length)
          return url
        }
        if ((down.get(url)?.until ?? 0) < (down.get(list[soonest]!)?.until ?? 0)) soonest = idx
      }
      next.set(service, (soonest + 1) % list.length)
      return list[soonest]!
    },
    instances: (service) => map[service] ?? [],
    partitioned: (service) => (map[service]?.length ?? 0) > 1,
    ...(opts.placed ? { placed: opts.placed } : {}),
    report(_service, url, ok) {
      if (ok) {
        if (down.size) down.delete(url)
        return
      }
      const backoff = nextWait(policy, down.get(url)?.backoff)
      down.set(url, { backoff, until: now() + backoff.duration })
    },
    status(service) {
      const at = now()
      return (map[service] ?? []).map((url) => ({ url, healthy: isUp(url, at) }))
    },
  }
}

/**
 * Where a request goes. A partitioned service (several instances, each owning a subset of
 * tenants) is reached at the owner of the request's tenant (rendezvous hashing, tenant-owner.ts),
 * or at its first instance when the request names no tenant, and never at another instance, which
 * holds none of the tenant's data. Any other service is reached through `pick`. The tenant is
 * only worked out (`tenantOf`) when it matters.
 *
 * @example
 * const { base, partitioned } = instanceFor(discovery, 'analytics', () => actor.tenantId)
 */
export function instanceFor(
  discovery: Discovery,
  service: ServiceName,
  tenantOf: () => string | undefined,
): { base: string; partitioned: boolean } {
  if (discovery.partitioned?.(service)) {
    const tenant = tenantOf()
    const placed = tenant === undefined ? undefined : discovery.placed?.(service, tenant)
    return { base: ownerOf(tenant, discovery.instances(service), placed), partitioned: true }
  }
  return { base: discovery.pick(service), partitioned: false }
}

/** An instance of a service by URL, refused unless discovery lists it (no call goes elsewhere). */
function instanceNamed(discovery: Discovery, service: ServiceName, url: string): string {
  const want = url.replace(/\/+$/, '')
  if (!discovery.instances(service).includes(want))
    throw new AppError('VALIDATION_FAILED', `${url} is not an instance of ${service}`)
  return want
}

/**
 * The tenant a bearer token was issued for, read without verifying it: only to route the call,
 * the called service verifies the token itself. Undefined for an API key or anything else.
 */
export function tenantOfToken(token: string | undefined): string | undefined {
  const payload = token?.split('.')[1]
  if (!payload) return undefined
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
    const tenant = (claims as { tenant_id?: unknown } | null)?.tenant_id
    return typeof tenant === 'string' ? tenant : undefined
  } catch {
    return undefined
  }
}

/**
 * The deadline a request carries (`X-Request-Deadline`, epoch ms), to pass on to downstream
 * calls; undefined when absent or malformed.
 *
 * @example
 * await ctx.client.call('billing', path, { token: actor.token, requestId, deadline: deadlineOf(request) })
 */
export function deadlineOf(request: Request | Headers): number | undefined {
  const headers = request instanceof Headers ? request : request.headers
  const raw = headers.get('x-request-deadline')
  if (!raw || !/^\d{1,16}$/.test(raw)) return undefined
  return Number(raw)
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  body?: unknown
  query?: Record<string, string | number | undefined>
  /** The caller's bearer token, forwarded so the callee re-verifies it. */
  token?: string | undefined
  requestId?: string | undefined
  /** Epoch ms after which the call is pointless (X-Request-Deadline). */
  deadline?: number | undefined
  /**
   * The request being served: its request id, deadline and traceparent are passed on unless
   * given explicitly above.
   */
  from?: Request | undefined
  headers?: Record<string, string>
  /**
   * The tenant the call is about, to reach the instance that owns it when the service runs as
   * several. Unset: the tenant the path, `query.tenant_id` or `body.tenant_id` names (the order
   * the services take it in, tenant-owner.ts `tenantOfCall`), else the tenant of the request
   * being served (its X-Tenant-ID) or of the token.
   */
  tenant?: string | undefined
  /** One instance of the service by its URL (a tenant moving between instances), not routed. */
  instance?: string | undefined
  /** How to read the answer: JSON (default) or the bytes of a file. */
  responseType?: 'json' | 'arrayBuffer' | 'stream'
}

function tenantOfCallOptions(path: string, opts: CallOptions): string | undefined {
  if (opts.tenant) return opts.tenant
  const named = [
    tenantInPath(path.split('?')[0]!),
    opts.query?.tenant_id,
    (opts.body as { tenant_id?: unknown } | null)?.tenant_id,
  ]
  for (const n of named) if (typeof n === 'string') return n
  return opts.from?.headers.get('x-tenant-id') ?? tenantOfToken(opts.token)
}

/**
 * Calls another service over HTTP with request id, deadline and auth forwarded; the deadline
 * becomes the call's timeout. Errors come back as AppError with the callee's problem detail.
 *
 * @example
 * const sub = await ctx.client.call<Subscription>('billing', `/api/v1/billing/subscriptions/${id}`, { token })
 */
export interface ServiceClient {
  call<T>(service: ServiceName, path: string, opts?: CallOptions): Promise<T>
  /** Every instance discovery lists for a service (several: it is partitioned by tenant). */
  instances?(service: ServiceName): readonly string[]
}

export function createServiceClient(
  discovery: Discovery,
  defaultTimeoutMs = 10_000,
  /** Signs what a call asserts in headers (a purpose), so the called service can believe it. */
  hop?: Hop,
): ServiceClient {
  return {
    instances: (service) => discovery.instances(service),
    async call<T>(service: ServiceName, path: string, opts: CallOptions = {}): Promise<T> {
      const deadline = opts.deadline ?? (opts.from ? deadlineOf(opts.from) : undefined)
      const requestId = opts.requestId ?? opts.from?.headers.get('x-request-id') ?? undefined
      const remaining = deadline ? deadline - Date.now() : defaultTimeoutMs
      if (remaining <= 0)
        throw new AppError('TIMEOUT', `the deadline passed before calling ${service}`)
      const base = opts.instance
        ? instanceNamed(discovery, service, opts.instance)
        : instanceFor(discovery, service, () => tenantOfCallOptions(path, opts)).base
      const headers: Record<string, string> = { ...(opts.headers ?? {}) }
      if (opts.token) headers.authorization = `Bearer ${opts.token}`
      if (requestId) headers['x-request-id'] = requestId
      const trace = opts.from?.headers.get('traceparent')
      if (trace && !headers.traceparent) headers.traceparent = trace
      // The caller's own deadline passes on unchanged (recomputing it from `remaining` drifts).
      headers['x-request-deadline'] = String(deadline ?? Date.now() + remaining)
      if (hop) {
        const signed = new Headers(headers)
        hop.sign(signed)
        headers[HOP_HEADER] = signed.get(HOP_HEADER)!
      }
      const until = Date.now() + remaining
      const send = (baseURL: string) =>
        ofetch<T>(path, {
          baseURL,
          method: opts.method ?? 'GET',
          body: opts.body as Record<string, unknown> | undefined,
          query: opts.query,
          headers,
          timeout: Math.max(1, until - Date.now()),
          retry: 0,
          // ofetch types the answer by responseType; the caller's T says what it is.
          ...(opts.responseType ? { responseType: opts.responseType as 'json' } : {}),
        })
      try {
        const res = await send(base).catch((err) => {
          // An instance that just handed the tenant over names its owner: asked there once.
          const owner = ownerNamed(err, service, base, discovery)
          if (!owner || opts.instance) throw err
          return send(owner)
        })
        discovery.report?.(service, base, true)
        return res
      } catch (err) {
        if (err instanceof FetchError) {
          const status = err.response?.status
          if (!status) {
            discovery.report?.(service, base, false)
            if (err.name === 'TimeoutError' || /timeout|aborted/i.test(err.message)) {
              throw new AppError('TIMEOUT', `${service} did not answer in time`)
            }
            throw new AppError('BAD_GATEWAY', `${service} is unreachable`)
          }
          const data = err.data as
            | {
                code?: string
                detail?: string
                errors?: FieldError[]
                extra?: Record<string, unknown>
              }
            | undefined
          const code = (data?.code ??
            (status >= 500 ? 'BAD_GATEWAY' : 'VALIDATION_FAILED')) as AppError['code']
          // The callee's problem passes through whole: its field errors tell the client what to fix.
          throw new AppError(
            status >= 500 ? 'BAD_GATEWAY' : code,
            data?.detail ?? `${service} answered ${status}`,
            {
              ...(status < 500 && Array.isArray(data?.errors) ? { errors: data.errors } : {}),
              ...(status === 429 || status === 503
                ? { headers: retryAfterOf(err.response?.headers) }
                : {}),
              cause: err,
            },
          )
        }
        throw err
      }
    },
  }
}

function retryAfterOf(headers: Headers | undefined): Record<string, string> {
  const value = headers?.get('retry-after')
  return value ? { 'Retry-After': value } : {}
}

/** The owner a 421 names (tenant-owner.ts `OWNER_HEADER`), when discovery lists it. */
function ownerNamed(
  err: unknown,
  service: ServiceName,
  base: string,
  discovery: Discovery,
): string | null {
  if (!(err instanceof FetchError) || err.response?.status !== 421) return null
  const owner = err.response.headers.get(OWNER_HEADER)
  return owner && owner !== base && discovery.instances(service).includes(owner) ? owner : null
}
