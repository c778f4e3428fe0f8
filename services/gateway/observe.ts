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
  let lastMs = 0
  let lastIso = ''
  const flush = () => {
    const chunk = pending.join('')
    pending = []
    process.stdout.write(chunk)
  }

  return {
    request({
      service,
      route,
      method,
      status,
      seconds,
    }: {
      service: string
      route: string
      method: string
      status: number
      seconds: number
    }): void {
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
    access(fields: AccessFields): void {
      if (opts.accessLog === 'off') return
      if (opts.accessLog === 'pretty') {
        process.stdout.write(prettyAccessLine(fields, new Date()))
        return
      }
      const ms = Date.now()
      if (ms !== lastMs) {
        lastMs = ms
        lastIso = new Date(ms).toISOString()
      }
      // Built by hand: the only free text is the path, which JSON.stringify escapes.
      pending.push(
        `{"time":"${lastIso}","level":"info","service":"gateway","msg":"request","request_id":${JSON.stringify(fields.request_id)}${fields.trace_id ? `,"trace_id":"${fields.trace_id}"` : ''},"method":"${fields.method}","path":${JSON.stringify(fields.path)},"status":${fields.status},"duration_ms":${fields.duration_ms}${fields.upstream ? `,"upstream":"${fields.upstream}"` : ''}${fields.tenant_id ? `,"tenant_id":"${fields.tenant_id}","user_id":${JSON.stringify(fields.user_id)}` : ''}}\n`,
      )
      if (pending.length === 1) setImmediate(flush)
    },
  }
}

/**
 * One terminal line per request: time, method, path, status, duration, then who and which
 * request id, e.g. `14:03:07 GET /api/v1/tenants 200 3ms duka usr_01… req_01…`.
 */
export function prettyAccessLine(f: AccessFields, at: Date): string {
  const time = at.toTimeString().slice(0, 8)
  const who = f.tenant_id ? ` ${f.tenant_id}${f.user_id ? ` ${f.user_id}` : ''}` : ''
  return `${time} ${f.method} ${f.path} ${f.status} ${f.duration_ms}ms${who} ${f.request_id}\n`
}

export interface AccessFields {
  request_id: string
  trace_id: string | undefined
  method: string
  path: string
  status: number
  duration_ms: number
  upstream: string | undefined
  tenant_id: string | undefined
  user_id: string | undefined
}

export type Observer = ReturnType<typeof createObserver>
