import { tenantInPath } from '../../schema/routes.ts'
import type { ServiceName } from '../kernel/context.ts'
import { AppError } from '../kernel/errors.ts'
import { type Discovery, instanceFor } from '../kernel/http-client.ts'
import { OWNER_HEADER } from '../kernel/tenant-owner.ts'
import { isTimeout, tenantInBody } from './checks.ts'
import type { Observer } from './observe.ts'

/** A service in the gateway's own process, called without a TCP hop. */
export interface LocalService {
  handle(request: Request): Promise<Response>
}

export interface Outgoing {
  method: string
  headers: Headers
  body: BodyInit | null
  /** Milliseconds the upstream has before the caller gets 504. */
  budget: number
  /**
   * The tenant the request is about, which picks the instance when the service runs as several.
   * Unset: found from the request itself (`tenantOfRequest`).
   */
  tenant?: string | undefined
}

/**
 * The tenant a forwarded request is about, by the rule the services apply (tenant-owner.ts
 * `tenantOfCall`): the tenant its path, `tenant_id` query parameter or JSON body names, else the
 * caller's own (X-Tenant-ID, set from the token). Undefined for a public route: such a request
 * goes to the service's first instance. A streamed upload is not read for it.
 */
export function tenantOfRequest(pathAndQuery: string, out: Outgoing): string | undefined {
  if (out.tenant) return out.tenant
  const q = pathAndQuery.indexOf('?')
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q)
  const named =
    tenantInPath(path) ??
    (q < 0 ? null : new URLSearchParams(pathAndQuery.slice(q + 1)).get('tenant_id')) ??
    (out.body instanceof Uint8Array || out.body instanceof ArrayBuffer
      ? out.headers.get('content-type')?.includes('json')
        ? tenantInBody(out.body)
        : undefined
      : undefined)
  return named ?? out.headers.get('x-tenant-id') ?? undefined
}

/**
 * How the gateway reaches a service: in-process when it runs here, otherwise over HTTP to an
 * instance from discovery, with a refused connection tried once on another instance (nothing
 * was sent, so even a POST is safe to repeat; a streamed body cannot be replayed, so it is not).
 * A partitioned service (several instances, each owning a subset of tenants, DESIGN §12) is reached
 * at the instance that owns the request's tenant and nowhere else: no other holds its data.
 */
export function createUpstream(opts: {
  discovery: Discovery
  local?: Partial<Record<ServiceName, LocalService>> | undefined
  observe: Observer
}) {
  const { discovery, observe } = opts

  const timeoutError = (service: ServiceName, budget: number) =>
    new AppError('TIMEOUT', `${service} did not answer within ${budget} ms`)

  /**
   * In-process dispatch: the handler cannot be aborted, but the caller gets its 504 on time, and
   * an answer that arrives after the budget is spent is a 504 too, as it would be over the network
   * (a handler that never yields would otherwise beat the timer).
   */
  async function dispatchLocal(
    local: LocalService,
    service: ServiceName,
    pathAndQuery: string,
    out: Outgoing,
  ): Promise<Response> {
    const started = performance.now()
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        observe.upstreamError(service, 'timeout')
        reject(timeoutError(service, out.budget))
      }, out.budget)
    })
    try {
      const request = new Request(`http://${service}.local${pathAndQuery}`, {
        method: out.method,
        headers: out.headers,
        body: out.body,
      })
      const response = await Promise.race([local.handle(request), expired])
      if (performance.now() - started >= out.budget) {
        void response.body?.cancel().catch(() => {})
        observe.upstreamError(service, 'timeout')
        throw timeoutError(service, out.budget)
      }
      return response
    } finally {
      clearTimeout(timer)
    }
  }

  return async function send(
    service: ServiceName,
    pathAndQuery: string,
    out: Outgoing,
  ): Promise<Response> {
    const local = opts.local?.[service]
    if (local) return dispatchLocal(local, service, pathAndQuery, out)
    const signal = AbortSignal.timeout(out.budget)
    const target = instanceFor(discovery, service, () => tenantOfRequest(pathAndQuery, out))
    const replayable = out.body === null || out.body instanceof ArrayBuffer
    const canRetry = !target.partitioned && replayable
    let base = target.base
    let followed = false
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(base + pathAndQuery, {
          method: out.method,
          headers: out.headers,
          body: out.body,
          redirect: 'manual',
          signal,
        })
        discovery.report?.(service, base, true)
        // An instance that just handed the tenant over knows its owner before this gateway
        // hears of the move: the request was refused unserved, so it goes there once.
        const owner = res.status === 421 ? res.headers.get(OWNER_HEADER) : null
        if (
          owner &&
          !followed &&
          replayable &&
          owner !== base &&
          discovery.instances(service).includes(owner)
        ) {
          void res.body?.cancel().catch(() => {})
          followed = true
          base = owner
          continue
        }
        return res
      } catch (err) {
        if (isTimeout(err)) {
          observe.upstreamError(service, 'timeout')
          throw timeoutError(service, out.budget)
        }
        observe.upstreamError(service, 'connect')
        discovery.report?.(service, base, false)
        const next = attempt === 0 && canRetry ? discovery.pick(service) : base
        if (next === base) throw new AppError('BAD_GATEWAY', `${service} is unreachable`)
        base = next
      }
    }
  }
}
