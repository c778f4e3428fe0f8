import type { ServiceName } from '../services/kernel/context.ts'
import { holdBackground, outboxNotices, type WorkerRole } from './background.ts'
import { backgroundWork } from './background-work.ts'
import type { Config } from './config.ts'
import { listenGateway } from './gateway-part.ts'
import {
  type BuiltService,
  buildService,
  localServices,
  openProcess,
  type ProcessBase,
  type ProcessWiring,
  reachable,
  startEmbeddedBroker,
  wireProcess,
} from './platform-parts.ts'
import { createReadiness, followSupervisorReadiness, type Readiness } from './readiness.ts'
import { startRevocationFeed } from './revocations.ts'
import { serviceModules } from './services.ts'
import { keepSessions } from './sessions.ts'
import { listenSimulator, simulatorWanted } from './simulator.ts'
import { logStarted, startupSteps } from './startup.ts'

export type { WorkerRole } from './background.ts'

export interface Platform {
  /** Stops accepting, finishes in-flight requests, flushes outboxes, closes everything. */
  stop(): Promise<void>
  urls: Record<string, string>
}

type Stoppable = { stop(closeActive?: boolean): Promise<void> | void }

/**
 * Starts every part of the platform that `config.only` names in this process: the broker, the
 * services and the gateway (built first, then listening together), the simulator, and after the
 * ports are up what answering does not wait for (the broker connection, consumers, outbox replay).
 */
export async function startPlatform(config: Config, worker?: WorkerRole): Promise<Platform> {
  const base = await openProcess(config, worker)
  const { log, wants } = base
  const steps = startupSteps(log)
  const broker = await steps.time('broker', () => startEmbeddedBroker(base))
  const wiring = await steps.time('wiring', () => wireProcess(base))
  const names = (Object.keys(serviceModules) as ServiceName[]).filter(wants)
  const simulator = worker ? null : simulatorWanted(config)
  const readiness = processReadiness(base, names, simulator)
  const notices = outboxNotices(log)
  const { discovery, client } = wiring
  const sessions = keepSessions({ dataDir: config.dataDir, discovery, client, local: names, log })
  const ctx = { base, wiring, sessions, notices, readiness }
  const built = await steps.time('services', () =>
    Promise.all(names.map((name) => buildService(name, ctx))),
  )
  const servers = await steps.time('listen', () => listenAll({ base, wiring, built, readiness }))
  const urls: Record<string, string> = Object.fromEntries(built.map((s) => [s.name, s.url]))
  if (wants('gateway')) urls.gateway = wiring.gatewayUrl
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

  // From here on nothing is needed to answer: this process's own broker session (revocations),
  // and the background work (consumers, outbox replay, rollups) of the process holding the lease.
  let stopping = false
  const feed = await steps.time('revocations', () =>
    followRevocationsHere({ base, wiring, sessions, notices, readiness, stopped: () => stopping }),
  )
  const work = backgroundWork({
    config,
    log,
    registry: wiring.registry,
    client,
    running: built,
    bus: feed?.bus ?? null,
    notices,
    withTenant: wants('tenant'),
  })
  // Never awaited: it may wait for the broker. /health says it is warming up.
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
  if (!worker) logStarted({ config, log, gateway: urls.gateway, format: base.format })
  worker?.ready?.()
  steps.report('serving')

  return {
    urls,
    async stop() {
      stopping = true
      background?.stop()
      await work.stop()
      await Promise.all(servers.map((s) => s.stop(false)))
      await stopServices(built)
      sessions.stop()
      await Promise.all(built.map((r) => r.bus.close().catch(() => {})))
      feed?.stop()
      work.close()
      await feed?.bus.close().catch(() => {})
      wiring.registry.closeAll()
      background?.close()
      await broker?.close()
      log.info('mmp stopped')
    },
  }
}

/**
 * Every part's /health answers 503 naming what is still starting, until all of this process
 * serves; a worker also waits for its supervisor's word that the platform serves (the simulator
 * and a first worker), unless it joins a platform that already does. Background work (consumers,
 * outbox replay) is not serving: a part restarted while the broker is slow answers reads and
 * takes writes into its outbox meanwhile.
 */
function processReadiness(
  base: ProcessBase,
  names: readonly string[],
  simulator: ReturnType<typeof simulatorWanted>,
): Readiness {
  const { worker, config, wants } = base
  const waitsForSupervisor = !!worker && !worker.joining
  const readiness = createReadiness([
    ...names,
    ...(wants('gateway') ? ['gateway'] : []),
    ...(waitsForSupervisor ? ['workers'] : []),
    ...((waitsForSupervisor ? simulatorWanted(config) : simulator) ? ['simulator'] : []),
  ])
  if (worker) followSupervisorReadiness(readiness)
  return readiness
}

/**
 * The gateway and every service start listening together, once all of them are built: a worker
 * joining a serving platform takes no connection it could not answer in full.
 */
async function listenAll(opts: {
  base: ProcessBase
  wiring: ProcessWiring
  built: readonly BuiltService[]
  readiness: Readiness
}): Promise<Stoppable[]> {
  const { base, wiring, built, readiness } = opts
  const { config, worker } = base
  const servers: Stoppable[] = []
  if (base.wants('gateway'))
    servers.push(
      ...(await listenGateway({
        config,
        format: base.format,
        worker,
        discovery: wiring.discovery,
        hop: wiring.hop,
        tokens: wiring.tokens,
        registry: wiring.registry,
        readiness,
        local: localServices(config, built),
      })),
    )
  // No await between the gateway listening and the services: no request is taken in between.
  for (const s of built) s.listen()
  readiness.done(...built.map((s) => s.name), 'gateway')
  return servers
}

/**
 * One broker session per process feeds the token verifier with revocations (removed users,
 * logouts), so a revoked token stops working in every process at once. It connects in the
 * background: reads and logins do not wait for the broker (events wait in the outbox).
 */
async function followRevocationsHere(opts: {
  base: ProcessBase
  wiring: ProcessWiring
  sessions: ReturnType<typeof keepSessions>
  notices: ReturnType<typeof outboxNotices>
  readiness: Readiness
  stopped: () => boolean
}) {
  const { base, wiring } = opts
  const { config, wants, worker, log } = base
  const names = (Object.keys(serviceModules) as ServiceName[]).filter(wants)
  const firstPart = names[0] ?? (wants('gateway') ? 'gateway' : null)
  if (!firstPart) return null
  const suffix = worker ? `-w${worker.index}` : ''
  const clientId = `mmp-tokens-${firstPart}-${config.ports[firstPart]}${suffix}`
  return startRevocationFeed({
    bus: await base.brokerBus(clientId, log, true),
    clientId,
    brokerUrl: base.brokerUrl,
    tokens: wiring.tokens,
    client: wiring.client,
    load: !wants('auth'),
    log,
    readiness: opts.readiness,
    sessions: opts.sessions,
    notices: opts.notices,
    stopped: opts.stopped,
  })
}

/** Stops the services: their servers, their own work, then their outboxes flushed and stopped. */
async function stopServices(built: readonly BuiltService[]) {
  await Promise.all(built.map((r) => r.instance.app.stop(false)))
  for (const r of built) await r.instance.stop?.()
  await Promise.all(built.map((r) => r.relay.flush()))
  await Promise.all(built.map((r) => r.relay.stop()))
}
