import type { Counter, Histogram } from 'prom-client'
import type { Logger } from '../kernel/log.ts'
import { counter, gauge, histogram } from '../kernel/metrics.ts'
import type { BreakerState } from './breaker.ts'

/**
 * The gateway's metrics (DESIGN §5) and access log. Label children are cached so a request
 * costs two map lookups, not prom-client's label hashing.
 */
export function createObserver(opts: { log: Logger; accessLog: 'json' | 'pretty' | 'off' }) {
  const requests = counter('mmp_gateway_requests_total', 'Requests through the gateway', [
    'service',
    'route',
    'method',
    'status',
  ])
  const latency = histogram(
    'mmp_gateway_request_duration_seconds',
    'Time from receiving a request to the upstream answering (headers), seconds',
    ['service', 'route'],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  )
  const breaker = gauge(
    'mmp_gateway_breaker_state',
    'Circuit breaker per upstream: 0 closed, 1 open, 2 half-open',
    ['service'],
  )
  const limited = counter('mmp_gateway_rate_limited_total', 'Requests refused with 429', [
    'scope',
    'tier',
  ])
  const upstreamErrors = counter(
    'mmp_gateway_upstream_errors_total',
    'Upstream calls that failed without an answer',
    ['service', 'kind'],
  )
  const counters = new Map<string, Counter.Internal>()
  const timers = new Map<string, Histogram.Internal<string>>()

  let pending: string[] = []
  const flush = () => {
    const chunk = pending.join('')
    pending = []
    process.stdout.write(chunk)
  }

  return {
    request(service: string, route: string, method: string, status: number, seconds: number): void {
      const key = `${service} ${route} ${method} ${status}`
      let c = counters.get(key)
      if (!c) {
        c = requests.labels(service, route, method, String(status))
        counters.set(key, c)
      }
      c.inc()
      const tkey = `${service} ${route}`
      let h = timers.get(tkey)
      if (!h) {
        h = latency.labels(service, route)
        timers.set(tkey, h)
      }
      h.observe(seconds)
    },
    breaker(service: string, state: BreakerState): void {
      breaker.set({ service }, state === 'closed' ? 0 : state === 'open' ? 1 : 2)
    },
    limited(scope: 'tenant' | 'ip', tier: string): void {
      limited.inc({ scope, tier })
    },
    upstreamError(service: string, kind: 'connect' | 'timeout'): void {
      upstreamErrors.inc({ service, kind })
    },
    /**
     * One access line per request carrying its request id. JSON lines are batched into one
     * write per event-loop turn: a write per request costs more than the proxying itself.
     */
    access(fields: Record<string, unknown>): void {
      if (opts.accessLog === 'off') return
      if (opts.accessLog === 'pretty') {
        opts.log.info(`${fields.method} ${fields.path} ${fields.status}`, fields)
        return
      }
      pending.push(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'info', service: 'gateway', msg: 'request', ...fields })}\n`,
      )
      if (pending.length === 1) setImmediate(flush)
    },
  }
}

export type Observer = ReturnType<typeof createObserver>
