import { FetchError, ofetch } from 'ofetch'
import type { ServiceName } from './context.ts'
import { AppError } from './errors.ts'

/** Where a service can be reached: the gateway and service clients ask this (DESIGN §1, §5). */
export interface Discovery {
  /** One base URL for the next call (round robin over healthy instances). */
  pick(service: ServiceName): string
  /** Every configured instance. */
  instances(service: ServiceName): readonly string[]
  /** Report an instance's failure or recovery so it is skipped while unhealthy. */
  report?(service: ServiceName, baseUrl: string, ok: boolean): void
}

/** Static discovery: a fixed list of base URLs per service, rotated round robin. */
export function staticDiscovery(map: Record<ServiceName, readonly string[]>): Discovery {
  const next = new Map<ServiceName, number>()
  const down = new Map<string, number>()
  return {
    pick(service) {
      const list = map[service]
      if (!list || list.length === 0)
        throw new AppError('SERVICE_UNAVAILABLE', `no instance of ${service} is configured`)
      const start = next.get(service) ?? 0
      for (let i = 0; i < list.length; i++) {
        const url = list[(start + i) % list.length]!
        const until = down.get(url)
        if (until === undefined || until < Date.now()) {
          next.set(service, (start + i + 1) % list.length)
          return url
        }
      }
      next.set(service, (start + 1) % list.length)
      return list[start % list.length]!
    },
    instances: (service) => map[service] ?? [],
    report(_service, url, ok) {
      if (ok) down.delete(url)
      else down.set(url, Date.now() + 5000)
    },
  }
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
  headers?: Record<string, string>
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
}

export function createServiceClient(
  discovery: Discovery,
  defaultTimeoutMs = 10_000,
): ServiceClient {
  return {
    async call<T>(service: ServiceName, path: string, opts: CallOptions = {}): Promise<T> {
      const base = discovery.pick(service)
      const remaining = opts.deadline ? opts.deadline - Date.now() : defaultTimeoutMs
      if (remaining <= 0)
        throw new AppError('TIMEOUT', `the deadline passed before calling ${service}`)
      const headers: Record<string, string> = { ...(opts.headers ?? {}) }
      if (opts.token) headers.authorization = `Bearer ${opts.token}`
      if (opts.requestId) headers['x-request-id'] = opts.requestId
      headers['x-request-deadline'] = String(Date.now() + remaining)
      try {
        const res = await ofetch<T>(path, {
          baseURL: base,
          method: opts.method ?? 'GET',
          body: opts.body as Record<string, unknown> | undefined,
          query: opts.query,
          headers,
          timeout: remaining,
          retry: 0,
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
          const data = err.data as { code?: string; detail?: string } | undefined
          const code = (data?.code ??
            (status >= 500 ? 'BAD_GATEWAY' : 'VALIDATION_FAILED')) as AppError['code']
          throw new AppError(
            status >= 500 ? 'BAD_GATEWAY' : code,
            data?.detail ?? `${service} answered ${status}`,
          )
        }
        throw err
      }
    },
  }
}
