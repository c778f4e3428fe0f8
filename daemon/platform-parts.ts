import { largestBodyLimit } from '../schema/routes.ts'
import { createMqttBus, type EventBus } from '../services/kernel/bus.ts'
import { type Clock, createClock } from '../services/kernel/clock.ts'
import type { ServiceName } from '../services/kernel/context.ts'
import { createRelay, type Relay } from '../services/kernel/events.ts'
import { createHop, type Hop } from '../services/kernel/hop.ts'
import {
  createServiceClient,
  type Discovery,
  type ServiceClient,
  staticDiscovery,
} from '../services/kernel/http-client.ts'
import { lazyBus } from '../services/kernel/lazy-bus.ts'
import { createLogger, type Logger } from '../services/kernel/log.ts'
import { createOwnership } from '../services/kernel/tenant-owner.ts'
import type { TokenVerifier } from '../services/kernel/tokens.ts'
import type { TenantRegistry } from '../tenants/registry.ts'
import type { outboxNotices, WorkerRole } from './background.ts'
import type { Running } from './background-work.ts'
import type { EmbeddedBroker } from './broker.ts'
import type { Config } from './config.ts'
import { processRegistry } from './process-registry.ts'
import { learnTenantsFrom } from './profiles.ts'
import type { Readiness } from './readiness.ts'
import { resolveApiKeysOverHttp } from './revocations.ts'
import { initDataDir, loadSecrets, publicKeyFromAuth, type Secrets } from './secrets.ts'
import {
  answerHealthWith,
  createService,
  idleTimeoutOf,
  processTokens,
  type SharedContext,
} from './service-start.ts'
import type { SessionKeeper } from './sessions.ts'
import type { SliceSource } from './slices.ts'
import { armFaults, startLogging } from './startup.ts'
import { version } from './version.ts'

/** What every start-up step of one process reads: its config, role, logger, secrets and broker. */
export interface ProcessBase {
  config: Config
  worker: WorkerRole | undefined
  log: Logger
  format: string
  secrets: Secrets
  clock: Clock
  /** Whether this process runs a part (a worker never runs the broker or the simulator). */
  wants(part: string): boolean
  brokerUrl: string
  /** A connection to this platform's broker as `clientId`. */
  brokerBus(clientId: string, log: Logger, deferred?: boolean): Promise<EventBus>
}

/** Logging, fault points, the data dir and its secrets: what every later step needs. */
export async function openProcess(config: Config, worker?: WorkerRole): Promise<ProcessBase> {
  const { log, format } = startLogging(config)
  armFaults(config, log, worker)
  const created = await initDataDir(config)
  if (created.length)
    log.info('initialised the data dir', { data_dir: config.dataDir, files: created.length })
  const secrets = loadSecrets(config)
  const brokerUrl =
    config.get<string | null>('mqtt.url') ?? `mqtt://127.0.0.1:${config.ports.broker}`
  return {
    config,
    worker,
    log,
    format,
    secrets,
    clock: createClock(),
    // The broker and the simulator hold state in memory: with workers, the supervisor runs them once.
    wants: (p) =>
      config.only.includes(p as never) && !(worker && (p === 'broker' || p === 'simulator')),
    brokerUrl,
    brokerBus: (clientId, log, deferred) =>
      createMqttBus({
        url: brokerUrl,
        username: secrets.mqttUsername,
        password: secrets.mqttPassword,
        clientId,
        log,
        deferred,
      }),
  }
}

/** The embedded broker, when this process runs it and no external one is configured. */
export async function startEmbeddedBroker(base: ProcessBase): Promise<EmbeddedBroker | null> {
  const { config, secrets, log } = base
  if (config.get<string | null>('mqtt.url') || !base.wants('broker')) return null
  // Imported here: a worker never runs the embedded broker.
  const { startBroker } = await import('./broker.ts')
  return startBroker({
    host: '127.0.0.1',
    port: config.ports.broker,
    username: secrets.mqttUsername,
    password: secrets.mqttPassword,
    log,
  })
}

/** How the parts of this process reach each other and the tenants' databases. */
export interface ProcessWiring {
  relays: Map<string, Relay>
  registry: TenantRegistry
  tokens: TokenVerifier
  discovery: Discovery
  hop: Hop
  client: ServiceClient
  /** The instance a tenant was moved to on a partitioned service, from its (cached) profile. */
  placed(service: string, tenantId: string): string | undefined
  sliceSource: SliceSource
  gatewayUrl: string
  /** Where the tenant service runs elsewhere: learns a tenant this process has no profile of. */
  learnTenant: ((tenantId: string) => Promise<boolean>) | undefined
}

/** The database registry, the token verifier, discovery and the client between services. */
export async function wireProcess(base: ProcessBase): Promise<ProcessWiring> {
  const { config, secrets, log, worker } = base
  // A part without auth and without a key file serves at once and learns the key from auth.
  const publicKey =
    secrets.jwtPublicPem ||
    publicKeyFromAuth(config, {
      onWait: (error) =>
        log.info('waiting for auth to publish its token key (JWKS); tokens answer 503 until then', {
          error,
        }),
    })
  const relays = new Map<string, Relay>()
  const registry = processRegistry(config, log, relays)
  const tokens = await processTokens(config, publicKey, !!worker)
  const placed = (service: string, tenantId: string) => {
    try {
      return registry.placement(tenantId).instances?.[service]
    } catch {
      return undefined // not a tenant id: routed by the hash, refused by the service
    }
  }
  const discovery = staticDiscovery(config.discovery, { placed })
  const hop = createHop(secrets.hopKey)
  const client = createServiceClient(discovery, config.get('gateway.timeout_ms'), hop)
  // API keys are asked of auth over HTTP; an auth service in this process swaps in its own lookup.
  tokens.resolveApiKeysWith(resolveApiKeysOverHttp(client))
  const gatewayUrl = `http://${reachable(config.gatewayHost)}:${config.ports.gateway}`
  // Each service gets its own typed slice of this, never the whole config or every secret.
  const sliceSource: SliceSource = {
    config,
    secrets,
    gatewayUrl,
    simulatorUrl: `http://${reachable(config.host)}:${config.ports.simulator}`,
  }
  const learnTenant = base.wants('tenant') ? undefined : learnTenantsFrom({ registry, client })
  return {
    relays,
    registry,
    tokens,
    discovery,
    hop,
    client,
    placed,
    sliceSource,
    gatewayUrl,
    learnTenant,
  }
}

/** A service built and ready to listen: `listen()` binds its port. */
export type BuiltService = Running & { url: string; listen(): void }

/**
 * Builds one service with its broker session and held relay; it does not listen yet. A worker's
 * bus connects on first use: a standby neither publishes nor subscribes, and the stable client
 * id (a persistent broker session) belongs to whoever runs the consumers. What a standby is asked
 * to publish (a moved tenant's events) goes on a connection of its own, which subscribes to nothing.
 */
export async function buildService(
  name: ServiceName,
  ctx: {
    base: ProcessBase
    wiring: ProcessWiring
    sessions: SessionKeeper
    notices: ReturnType<typeof outboxNotices>
    readiness: Readiness
  },
): Promise<BuiltService> {
  const { base, wiring, sessions, notices, readiness } = ctx
  const { config, worker } = base
  const slog = createLogger(name)
  const clientId = `mmp-${name}-${config.ports[name]}`
  // Connected once the service's consumers are registered (the background work).
  const connect = () => base.brokerBus(clientId, slog, true)
  const bus = worker
    ? lazyBus(connect, { publisher: () => base.brokerBus(`${clientId}-w${worker.index}`, slog) })
    : await connect()
  sessions.keep(bus, clientId)
  // Held until every service of this process has subscribed (the background work releases it):
  // a service's databases open while it is built, and a replay then would reach no consumer yet.
  const relay = createRelay({
    bus,
    log: slog,
    paused: config.get('outbox.paused'),
    held: true,
    onHeld: worker ? (db) => notices.tell(name, db.path) : undefined,
    replayAfterReconnectMs: config.get<number>('outbox.replay_window_s') * 1000,
  })
  wiring.relays.set(name, relay)
  const shared: SharedContext = {
    version,
    registry: wiring.registry,
    bus,
    relay,
    tokens: wiring.tokens,
    clock: base.clock,
    log: slog,
    client: wiring.client,
    hop: wiring.hop,
    workers: worker?.count ?? 1,
    learnTenant: wiring.learnTenant,
    ownership: createOwnership(config.discovery[name], config.self[name], (t) =>
      wiring.placed(name, t),
    ),
    checks: new Map([['broker', () => ({ status: 'ok' as const })]]),
  }
  const instance = await createService(name, shared, wiring.sliceSource)
  answerHealthWith(instance, name, readiness)
  const idleTimeout = idleTimeoutOf(config)
  return {
    name,
    instance,
    relay,
    bus,
    url: `http://${config.host}:${config.ports[name]}`,
    listen: () =>
      void instance.app.listen({
        port: config.ports[name],
        hostname: config.host,
        // Each service counts bodies against its own limits (413 problem+json); Bun's cap, a
        // bare 413, is a backstop at twice the largest of them so it never answers first.
        maxRequestBodySize: 2 * largestBodyLimit(name),
        idleTimeout,
        // Only workers share a port; another process on it fails to start instead of quietly
        // taking half of its connections.
        reusePort: !!worker,
      }),
  }
}

/**
 * Services of this process whose discovery is their own port, which the gateway calls in-process.
 */
export function localServices(config: Config, built: readonly BuiltService[]) {
  return Object.fromEntries(
    built
      .filter(
        (r) =>
          config.discovery[r.name].length === 1 &&
          config.discovery[r.name][0] === r.url.replace('0.0.0.0', '127.0.0.1'),
      )
      .map((r) => [r.name, r.instance.app]),
  )
}

/** The address a process on this host reaches a server bound to `host` at. */
export const reachable = (host: string) =>
  host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
