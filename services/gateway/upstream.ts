import type { ServiceName } from '../kernel/context.ts'
import { AppError } from '../kernel/errors.ts'
import type { Discovery } from '../kernel/http-client.ts'
import { isTimeout } from './checks.ts'
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
}

/**
 * How the gateway reaches a service: in-process when it runs here, otherwise over HTTP to an
 * instance from discovery, with a refused connection tried once on another instance (nothing
 * was sent, so even a POST is safe to repeat; a streamed body cannot be replayed, so it is not).
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
    const canRetry = out.body === null || out.body instanceof ArrayBuffer
    let base = discovery.pick(service)
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
