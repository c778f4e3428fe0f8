import { basename, isAbsolute, join, relative } from 'node:path'
import type { EventBus } from '../services/kernel/bus.ts'
import { openLease } from '../services/kernel/lease.ts'
import type { Logger } from '../services/kernel/log.ts'
import type { Config } from './config.ts'

/** This process's place among the workers of one `mmp serve --workers N` (daemon/workers.ts). */
export interface WorkerRole {
  index: number
  count: number
  /**
   * Started after the platform serves (a worker following the first, or one started again): its
   * /health waits for nothing of its supervisor's.
   */
  joining?: boolean
  /** Told once this worker listens (and, if it took the background work, runs it). */
  ready?: () => void
  /** Every worker's metrics together, for /metrics. */
  metrics?: () => Promise<string>
}

/**
 * Standby workers hold their relays; when they commit events they say so on an internal topic,
 * and the worker running the relays drains that database at once (its poller would find it
 * within a second anyway).
 */
export function outboxNotices(log: Logger) {
  let bus: EventBus | null = null
  const pending = new Map<string, { service: string; path: string }>()
  let queued = false
  const send = () => {
    queued = false
    const list = [...pending.values()]
    pending.clear()
    for (const n of list)
      bus
        ?.publish(OUTBOX_NOTICE, n as never)
        .catch((err: Error) =>
          log.warn('could not tell the relaying worker about new events', { error: err.message }),
        )
  }
  return {
    attach(b: EventBus) {
      bus = b
    },
    tell(service: string, path: string) {
      if (!bus) return
      pending.set(`${service}\n${path}`, { service, path })
      if (!queued) {
        queued = true
        setTimeout(send, 0)
      }
    },
    follow: (b: EventBus, onNotice: (service: string, path: string) => void) =>
      b.subscribe(OUTBOX_NOTICE, (n) => {
        const { service, path } = n as unknown as { service?: unknown; path?: unknown }
        if (typeof service === 'string' && typeof path === 'string') onNotice(service, path)
      }),
  }
}

const OUTBOX_NOTICE = 'mmp/internal/outbox'

/** A path a notice names must be one of this data dir's databases of that service. */
export function isDatabaseOf(dataDir: string, service: string, path: string): boolean {
  const rel = relative(dataDir, path)
  return !rel.startsWith('..') && !isAbsolute(rel) && basename(path) === `${service}.db`
}

/**
 * A worker takes the background work when the lease is free or its holder died, checks every
 * second, and renews while it holds it, also while the work is still starting. A holder that finds the lease taken (it hung past the
 * time to live) exits at once: the supervisor starts it again as a standby, and the work never
 * runs twice.
 */
export async function holdBackground(
  config: Config,
  log: Logger,
  worker: WorkerRole,
  start: () => Promise<void>,
) {
  // One lease per set of parts: `--only` processes sharing a data dir each run their own work.
  const name = `background:${[...config.only].sort().join(',')}`
  const lease = openLease(join(config.dataDir, 'run', 'leases.db'), name, {
    ttlMs: config.get<number>('workers.lease_ttl_s') * 1000,
  })
  let holding = false
  let stopped = false
  let busy = false
  const tick = async () => {
    if (stopped || busy) return
    busy = true
    try {
      if (holding) {
        if (!lease.renew()) {
          log.error('another worker took over the background work; this worker stops', {
            worker: worker.index,
          })
          process.exit(1)
        }
      } else if (lease.tryAcquire()) {
        holding = true
        log.info('this worker runs the background work', { worker: worker.index })
        // Not awaited: renewing the lease never waits on start-up work (it once took longer
        // than the lease's time to live, and another worker took over mid-start).
        void start().catch((err) =>
          log.error('the background work failed to start', { error: (err as Error)?.message }),
        )
      }
    } catch (err) {
      log.warn('background lease check failed', { error: (err as Error)?.message })
    } finally {
      busy = false
    }
  }
  await tick()
  const timer = setInterval(tick, 1000)
  return {
    stop() {
      stopped = true
      clearInterval(timer)
    },
    close: () => lease.close(),
  }
}
