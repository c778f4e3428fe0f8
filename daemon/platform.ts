import { largestBodyLimit } from '../schema/routes.ts'
import { createMqttBus } from '../services/kernel/bus.ts'
import { createClock } from '../services/kernel/clock.ts'
import type { ServiceName } from '../services/kernel/context.ts'
import { createRelay, type Relay } from '../services/kernel/events.ts'
import { createHop } from '../services/kernel/hop.ts'
import { createServiceClient, staticDiscovery } from '../services/kernel/http-client.ts'
import { lazyBus } from '../services/kernel/lazy-bus.ts'
import { createLogger, type Logger } from '../services/kernel/log.ts'
import { createOwnership } from '../services/kernel/tenant-owner.ts'
import { holdBackground, outboxNotices, type WorkerRole } from './background.ts'
import { backgroundWork, type Running } from './background-work.ts'
import type { EmbeddedBroker } from './broker.ts'
import type { Config } from './config.ts'
import { listenGateway } from './gateway-part.ts'
import { processRegistry } from './process-registry.ts'
import { learnTenantsFrom } from './profiles.ts'
import { createReadiness, followSupervisorReadiness } from './readiness.ts'
import { resolveApiKeysOverHttp, startRevocationFeed } from './revocations.ts'
import { initDataDir, loadSecrets, publicKeyFromAuth } from './secrets.ts'
import {
  answerHealthWith,
  createService,
  idleTimeoutOf,
  processTokens,
  type SharedContext,
} from './service-start.ts'
import { serviceModules } from './services.ts'
import { keepSessions } from './sessions.ts'
import { listenSimulator, simulatorWanted } from './simulator.ts'
import type { SliceSource } from './slices.ts'
import { armFaults, logStarted, startLogging } from './startup.ts'
import { version } from './version.ts'

export type { WorkerRole } from './background.ts'

export interface Platform {
  /** Stops accepting, finishes in-flight requests, flushes outboxes, closes everything. */
  stop(): Promise<void>
  urls: Record<string, string>
}

/**
 * Starts every part of the platform that `config.only` names in this process: the broker, the
 * services on their ports, the gateway and the simulator.
 */
export async function startPlatform(config: Config, worker?: WorkerRole): Promise<Platform> {
  const { log, format } = startLogging(config)
  armFaults(config, log, worker)
  const created = await initDataDir(config)
  if (created.length)
    log.info('initialised the data dir', { data_dir: config.dataDir, files: created.length })
  const secrets = loadSecrets(config)
  // A part without auth and without a key file serves at once and learns the key from auth.
  const publicKey =
    secrets.jwtPublicPem ||
    publicKeyFromAuth(config, {
      onWait: (error) =>
        log.info('waiting for auth to publish its token key (JWKS); tokens answer 503 until then', {
          error,
        }),
    })
  const clock = createClock()
  // The broker and the simulator hold state in memory: with workers, the supervisor runs them once.
  const wants = (p: string) =>
    config.only.includes(p as never) && !(worker && (p === 'broker' || p === 'simulator'))
  const suffix = worker ? `-w${worker.index}` : ''

  let broker: EmbeddedBroker | null = null
  const externalBroker = config.get<string | null>('mqtt.url')
  if (!externalBroker && wants('broker')) {
    // Imported here: a worker never runs the embedded broker.
    const { startBroker } = await import('./broker.ts')
    broker = await startBroker({
      host: '127.0.0.1',
      port: config.ports.broker,
      username: secrets.mqttUsername,
      password: secrets.mqttPassword,
      log,
    })
  }
  const brokerUrl = externalBroker ?? `mqtt://127.0.0.1:${config.ports.broker}`
  /** A connection to this platform's broker as `clientId`. */
  const brokerBus = (clientId: string, log: Logger, deferred?: boolean) =>
    createMqttBus({
      url: brokerUrl,
      username: secrets.mqttUsername,
      password: secrets.mqttPassword,
      clientId,
      log,
      deferred,
    })

  const relays = new Map<string, Relay>()
  const replayMs = config.get<number>('outbox.replay_window_s') * 1000
  const registry = processRegistry(config, log, relays)
  const tokens = await processTokens(config, publicKey, !!worker)
  /** The instance a tenant was moved to on a partitioned service, from its (cached) profile. */
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
  const learnTenant = learnTenantsFrom({ registry, client })
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

  const idleTimeout = idleTimeoutOf(config)
  const running: Running[] = []
  const notices = outboxNotices(log)
  const servers: Array<{ stop(closeActive?: boolean): Promise<void> | void }> = []
  const urls: Record<string, string> = {}
  const names = (Object.keys(serviceModules) as ServiceName[]).filter(wants)
  // Every part's /health answers 503 naming what is still starting, until all of this process
  // serves; a worker also waits for its supervisor's word that the others and the simulator do.
  // Background work (consumers, outbox replay) is not serving: a part restarted while the broker
  // is slow answers reads and takes writes into its outbox meanwhile.
  const simulator = worker ? null : simulatorWanted(config)
  const readiness = createReadiness([
    ...names,
    ...(wants('gateway') ? ['gateway'] : []),
    ...(worker ? ['workers'] : []),
    ...((worker ? simulatorWanted(config) : simulator) ? ['simulator'] : []),
  ])
  if (worker) followSupervisorReadiness(readiness)
  const sessions = keepSessions({ dataDir: config.dataDir, discovery, client, local: names, log })

  await Promise.all(
    names.map(async (name) => {
      const slog = createLogger(name)
      const clientId = `mmp-${name}-${config.ports[name]}`
      // Connected once the service's consumers are registered (below).
      const connect = () => brokerBus(clientId, slog, true)
      // A worker connects on first use: a standby neither publishes nor subscribes, and the
      // stable client id (a persistent broker session) belongs to whoever runs the consumers.
      // What a standby is asked to publish (a moved tenant's events) goes on a connection of its
      // own, which subscribes to nothing.
      const bus = worker
        ? lazyBus(connect, { publisher: () => brokerBus(`${clientId}-w${worker.index}`, slog) })
        : await connect()
      sessions.keep(bus, clientId)
      // Held until every service of this process has subscribed (released below): a service's
      // databases open while it is built, and a replay then would reach no consumer yet.
      const relay = createRelay({
        bus,
        log: slog,
        paused: config.get('outbox.paused'),
        held: true,
        onHeld: worker ? (db) => notices.tell(name, db.path) : undefined,
        replayAfterReconnectMs: replayMs,
      })
      relays.set(name, relay)
      const shared: SharedContext = {
        version,
        registry,
        bus,
        relay,
        tokens,
        clock,
        log: slog,
        client,
        hop,
        siblings: (worker?.count ?? 1) > 1,
        learnTenant: wants('tenant') ? undefined : learnTenant,
        ownership: createOwnership(config.discovery[name], config.self[name], (t) =>
          placed(name, t),
        ),
        checks: new Map([['broker', () => ({ status: 'ok' as const })]]),
      }
      const instance = await createService(name, shared, sliceSource)
      answerHealthWith(instance, name, readiness)
      instance.app.listen({
        port: config.ports[name],
        hostname: config.host,
        // Each service counts bodies against its own limits (413 problem+json); Bun's cap, a bare
        // 413, is a backstop at twice the largest of them so it never answers first.
        maxRequestBodySize: 2 * largestBodyLimit(name),
        idleTimeout,
        // Only workers share a port; another process on it fails to start instead of quietly
        // taking half of its connections.
        reusePort: !!worker,
      })
      urls[name] = `http://${config.host}:${config.ports[name]}`
      running.push({ name, instance, relay, bus })
      readiness.done(name)
    }),
  )

  // One broker session per process feeds the token verifier with revocations (removed users,
  // logouts), so a revoked token stops working in every process at once. It connects in the
  // background: reads and logins do not wait for the broker (events wait in the outbox).
  let stopping = false
  const firstPart = names[0] ?? (wants('gateway') ? 'gateway' : null)
  const tokensClientId = `mmp-tokens-${firstPart}-${config.ports[firstPart as keyof typeof config.ports]}${suffix}`
  const feed = firstPart
    ? await startRevocationFeed({
        bus: await brokerBus(tokensClientId, log, true),
        clientId: tokensClientId,
        brokerUrl,
        tokens,
        client,
        load: !wants('auth'),
        log,
        readiness,
        sessions,
        notices,
        stopped: () => stopping,
      })
    : null
  const revocationBus = feed?.bus ?? null

  if (wants('gateway')) {
    servers.push(
      ...(await listenGateway({
        config,
        format,
        worker,
        discovery,
        hop,
        tokens,
        registry,
        readiness,
        // Services of this process whose discovery is their own port are called in-process.
        local: Object.fromEntries(
          running
            .filter(
              (r) =>
                config.discovery[r.name].length === 1 &&
                config.discovery[r.name][0] === urls[r.name]?.replace('0.0.0.0', '127.0.0.1'),
            )
            .map((r) => [r.name, r.instance.app]),
        ),
      })),
    )
    urls.gateway = gatewayUrl
    readiness.done('gateway')
  }

  // The payment service talks to the simulator on this host, so it comes along with payment too;
  // when another local process already serves that port, that one is used. It starts once payment
  // listens: on start it fires callbacks a previous process accepted, and the events they cause
  // wait in payment's outbox until every consumer has subscribed (the relays are held until then).
  // A worker never starts one: its supervisor runs the one simulator (SO_REUSEPORT would let
  // each worker bind its own, each knowing only the tokens it issued).
  if (simulator) {
    const sim = listenSimulator(config, log, simulator === 'implied')
    if (sim) {
      servers.push({ stop: async () => void (await sim.stop()) })
      urls.simulator = `http://${reachable(config.host)}:${config.ports.simulator}`
    }
    readiness.done('simulator')
  }

  // The background work: consumers, schedulers, relays and backups. One process runs it; of
  // several workers, the one holding the lease (daemon/lease.ts).
  const work = backgroundWork({
    config,
    log,
    registry,
    client,
    running,
    bus: revocationBus,
    notices,
    withTenant: wants('tenant'),
  })
  // After the ports are up and never awaited: it may wait for the broker, and what it does
  // (outbox replay, rollups catching up) is not needed to answer. /health says it is warming up.
  const warmUp = async () => {
    readiness.warming('background', 'consumers subscribing, outbox replay, rollups catching up')
    try {
      await work.start()
    } catch (err) {
      log.error('the background work failed to start', { error: (err as Error)?.message })
    } finally {
      readiness.warmed('background')
    }
  }
  const background = worker ? await holdBackground(config, log, worker, warmUp) : null
  if (!worker) void warmUp()

  // Only now: the line means what /health means, every part of this process serves.
  if (!worker) logStarted(config, log, urls.gateway, format)
  worker?.ready?.()

  return {
    urls,
    async stop() {
      stopping = true
      background?.stop()
      await work.stop()
      await Promise.all(servers.map((s) => s.stop(false)))
      await Promise.all(running.map((r) => r.instance.app.stop(false)))
      for (const r of running) await r.instance.stop?.()
      await Promise.all(running.map((r) => r.relay.flush()))
      await Promise.all(running.map((r) => r.relay.stop()))
      sessions.stop()
      await Promise.all(running.map((r) => r.bus.close().catch(() => {})))
      feed?.stop()
      work.close()
      await revocationBus?.close().catch(() => {})
      registry.closeAll()
      background?.close()
      await broker?.close()
      log.info('mmp stopped')
    },
  }
}

/** The address a process on this host reaches a server bound to `host` at. */
const reachable = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host)
