import type { EventBus } from '../services/kernel/bus.ts'
import type { ServiceInstance, ServiceName } from '../services/kernel/context.ts'
import type { Relay } from '../services/kernel/events.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import type { TenantRegistry } from '../tenants/registry.ts'
import { isDatabaseOf, type outboxNotices } from './background.ts'
import { startBackupSchedule } from './backup-schedule.ts'
import { untilConnected } from './broker-wait.ts'
import type { Config } from './config.ts'
import { followProfiles } from './profiles.ts'
import { version } from './version.ts'

/** A service started in this process, with its relay and broker session. */
export interface Running {
  name: ServiceName
  instance: ServiceInstance
  relay: Relay
  bus: EventBus
}

/**
 * The background work of one process: consumers, schedulers, relays, the profile feed and
 * backups. One process runs it; of several workers, the one holding the lease (daemon/lease.ts).
 */
export function backgroundWork(opts: {
  config: Config
  log: Logger
  registry: TenantRegistry
  client: ServiceClient
  running: readonly Running[]
  /** This process's own broker session (the revocation feed's), if it has one. */
  bus: EventBus | null
  notices: ReturnType<typeof outboxNotices>
  /** Whether the tenant service runs in this process. */
  withTenant: boolean
}) {
  const { config, log, registry, running, bus } = opts
  let backups: ReturnType<typeof startBackupSchedule> = null
  let profileFeed: { stop(): void } | null = null
  /** Set by stop: a start still waiting (for the broker) gives up instead of going on. */
  let stopped = false
  const isStopped = () => stopped
  return {
    /**
     * Runs after the ports are up, never awaited by what answers requests or renews the lease:
     * it may wait for the broker as long as it is down.
     */
    async start() {
      // Without the tenant service here, this process keeps its own copy of the tenant profiles
      // and entitlements (a no-op while the tenant service and billing share this data dir).
      if (bus && !opts.withTenant)
        profileFeed = await followProfiles({
          registry,
          bus,
          client: opts.client,
          services: running.map((r) => r.name),
          log,
        })
      // Consumers subscribe first: the relays below publish what a crash left unsent, and the
      // broker keeps nothing for a subscriber that comes later.
      for (const r of running) await r.instance.start?.()
      // Every consumer is registered: the buses connect and take what their sessions queued.
      for (const r of running) {
        const ready = r.bus.ready
        if (!ready) continue
        const what = `${r.name} events`
        if (!(await untilConnected(() => ready.call(r.bus), { log, what, stopped: isStopped })))
          return
      }
      if (stopped) return
      for (const r of running) r.relay.release()
      // Every tenant database is opened once at start so its relay replays and drains it; one at
      // a time, so the scan stays under the open-database cap however many tenants there are.
      for (const r of running) {
        registry.platform(r.name)
        for (const path of registry.existingTenantDatabases(r.name)) {
          if (stopped) return
          try {
            await r.relay.settled(registry.openPath(r.name, path, null))
          } catch (err) {
            log.warn('could not open a tenant database at start', {
              service: r.name,
              db: path,
              error: (err as Error)?.message,
            })
          }
        }
      }
      if (bus)
        await opts.notices.follow(bus, (service, path) => {
          const r = running.find((x) => x.name === service)
          if (!r || !isDatabaseOf(config.dataDir, service, path)) return
          const db = registry.openPath(service, path, null)
          r.relay.watch(db)
          r.relay.nudge(db)
        })
      if (!stopped) backups = startBackupSchedule(config, log, version)
    },
    /** Stops the backup schedule (first, before the servers stop); a start under way gives up. */
    async stop() {
      stopped = true
      await backups?.stop()
    },
    /** Stops following tenant profiles (last, with the other broker feeds). */
    close() {
      profileFeed?.stop()
    },
  }
}
