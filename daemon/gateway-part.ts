import { join } from 'node:path'
import { tierOfProfile } from '../schema/plans.ts'
import { largestBodyLimit } from '../schema/routes.ts'
import { createGateway } from '../services/gateway/index.ts'
import { createSharedRateLimiter } from '../services/gateway/shared-rate.ts'
import type { LocalService } from '../services/gateway/upstream.ts'
import type { ServiceName } from '../services/kernel/context.ts'
import type { Hop } from '../services/kernel/hop.ts'
import type { Discovery } from '../services/kernel/http-client.ts'
import { createLogger } from '../services/kernel/log.ts'
import { appErrorResponse, problemResponse, storageError } from '../services/kernel/problem.ts'
import type { TokenVerifier } from '../services/kernel/tokens.ts'
import type { TenantRegistry } from '../tenants/registry.ts'
import { startDashboard } from '../web/serve.ts'
import type { WorkerRole } from './background.ts'
import type { Config } from './config.ts'
import type { Readiness } from './readiness.ts'
import { gatewayIdleTimeoutOf } from './service-start.ts'
import { version } from './version.ts'

/**
 * The gateway part of `mmp serve`: the public port, serving the dashboard at `/` and the API
 * behind it, with the gateway's settings from config. Returns what stops it.
 */
export async function listenGateway(opts: {
  config: Config
  format: string
  worker: WorkerRole | undefined
  discovery: Discovery
  hop: Hop
  tokens: TokenVerifier
  registry: TenantRegistry
  /** What of this process is still starting: `/health` answers 503 naming it until then. */
  readiness: Readiness
  /** Services of this process the gateway calls in-process. */
  local: Partial<Record<ServiceName, LocalService>>
}): Promise<Array<{ stop(closeActive?: boolean): Promise<void> | void }>> {
  const { config, format, worker, discovery, hop, tokens, registry, readiness } = opts
  const idleTimeout = gatewayIdleTimeoutOf(config)
  const json = format === 'auto' ? !process.stdout.isTTY : format === 'json'
  const quiet = ['silent', 'error', 'warn'].includes(config.get<string>('log.level'))
  const gateway = createGateway({
    discovery,
    hop,
    tokens,
    log: createLogger('gateway'),
    version,
    timeoutMs: config.get('gateway.timeout_ms'),
    bulkTimeoutMs: config.get('gateway.bulk_timeout_ms'),
    tierOf: (tenantId) => tierOfProfile(registry.placement(tenantId)),
    metricsText: worker?.metrics,
    // Workers share each tenant's bucket through a file; one process keeps it in memory.
    limiter: worker
      ? createSharedRateLimiter(join(config.dataDir, 'run', 'rate-limits.db'), {
          workers: worker.count,
        })
      : undefined,
    rates: {
      free: config.get('rate_limit.free'),
      pro: config.get('rate_limit.pro'),
      enterprise: config.get('rate_limit.enterprise'),
      burstFactor: config.get('rate_limit.burst_factor'),
      perIp: config.get('rate_limit.per_ip'),
    },
    bodyLimit: config.get('gateway.body_limit'),
    uploadLimit: config.get('gateway.upload_limit'),
    breaker: {
      threshold: config.get<number>('gateway.breaker_threshold_pct') / 100,
      minRequests: config.get('gateway.breaker_min_requests'),
      windowMs: config.get('gateway.breaker_window_ms'),
      halfOpenMs: config.get('gateway.breaker_half_open_ms'),
    },
    accessLog: quiet ? 'off' : json ? 'json' : 'pretty',
    local: opts.local,
    // The connection cap forgets a connection once it idled as long as the server keeps it.
    idleTimeoutS: idleTimeout,
    connectionsPerAddress: config.get('gateway.connections_per_address'),
  })
  const dashboard = startDashboard({ hstsMaxAgeS: config.get<number>('gateway.hsts_max_age_s') })
  // Bun builds the bundle on the page's first request (a quarter of a second and more of a
  // worker's start): built after the port is up, and a dashboard request waits for it, so a page
  // never asks a worker for a chunk it has not built yet.
  readiness.warming('dashboard', 'building the dashboard bundle')
  void dashboard.ready.then(() => readiness.warmed('dashboard'))

  const server = Bun.serve({
    port: config.ports.gateway,
    hostname: config.gatewayHost,
    development: false,
    reusePort: !!worker,
    // The dashboard (with its security headers) at `/`; everything else is the API.
    fetch: (request, srv) =>
      readiness.answer('gateway', request) ??
      (dashboard.handles(request)
        ? dashboard.ready.then(() => dashboard.fetch(request))
        : withWarming(readiness, request, gateway.fetch(request, srv))),
    // The gateway refuses oversized bodies itself, by Content-Length or while streaming, with
    // a problem+json 413; Bun's own cap (a bare 413) is a backstop at twice the largest limit.
    maxRequestBodySize:
      2 *
      largestBodyLimit('gateway', {
        default: config.get<number>('gateway.body_limit'),
        upload: config.get<number>('gateway.upload_limit'),
      }),
    idleTimeout,
    error: (err) => {
      const storage = storageError(err)
      if (storage) return appErrorResponse(storage, undefined)
      return problemResponse(
        { status: 500, code: 'INTERNAL', detail: 'an internal error occurred' },
        undefined,
      )
    },
  })
  return [
    { stop: () => dashboard.stop() },
    { stop: (closeActive?: boolean) => server.stop(closeActive) },
  ]
}

/** The gateway's `/health` answer with what is still warming up added (daemon/readiness.ts). */
async function withWarming(
  readiness: Readiness,
  request: Request,
  answer: Response | Promise<Response>,
): Promise<Response> {
  const res = await answer
  if (!readiness.decorate(request, {})) return res
  let body: unknown
  try {
    body = await res.clone().json()
  } catch {
    return res
  }
  const decorated = readiness.decorate(request, body)
  if (!decorated) return res
  const headers = new Headers(res.headers)
  headers.delete('content-length')
  return Response.json(decorated, { status: res.status, headers })
}
