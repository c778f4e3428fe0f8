import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EventBus } from '../services/kernel/bus.ts'
import { PURPOSE_HEADER } from '../services/kernel/entitlements.ts'
import { HANDOFF_PATHS } from '../services/kernel/handoff-routes.ts'
import type { Discovery, ServiceClient } from '../services/kernel/http-client.ts'
import type { Logger } from '../services/kernel/log.ts'
import { retryUntilDone } from '../services/kernel/retry.ts'
import { type ServiceName, serviceNames } from '../services/kernel/service-names.ts'
import { PLATFORM_SYNC } from '../services/kernel/tokens.ts'
import { replaceJson } from '../tenants/json-file.ts'

/** What this process last knew of one broker session (`<data dir>/broker-sessions/<client>.json`). */
interface Mark {
  /** The last time the session was known connected. */
  seen_at: string
  /** A replay was asked for since then and has not been answered by every part yet. */
  owed_since?: string | undefined
}

export interface SessionKeeper {
  /** Follows one bus of this process, known to the broker by `clientId`. */
  keep(bus: EventBus, clientId: string): void
  /** Writes the last marks (a graceful stop) and stops the timer. */
  stop(): void
}

/**
 * A persistent broker session holds what was published for a consumer while it was away. A broker
 * that lost it (restarted without persistence, a session expired, an EMQX node gone without
 * durable sessions) says so on the next connection (`sessionPresent` false), and the events it
 * held are gone from the broker, never from their producers' outboxes (DESIGN §7). So each bus
 * of this process keeps a mark of when it was last connected; on a connection without its
 * session it asks every part in another process to publish its topics again since that mark
 * (`POST /internal/events/replay`, as the platform); the inbox drops what was applied already.
 * Parts of this process need no asking: their relays republish their recent events when the
 * process starts and when its broker connection comes back. A replay owed but not yet answered
 * is remembered in the mark, so a crash meanwhile asks again at the next start.
 *
 * @example
 * const sessions = keepSessions({ dataDir, discovery, client, local: names, log })
 * sessions.keep(bus, 'mmp-analytics-4105')
 */
export function keepSessions(opts: {
  dataDir: string
  discovery: Discovery
  client: ServiceClient
  /** The parts of this process. */
  local: readonly string[]
  log: Logger
  /** How often a connected session's mark is written. */
  everyMs?: number
  /** Asked back beyond the mark, for clocks that differ between hosts. */
  marginMs?: number
}): SessionKeeper {
  const dir = join(opts.dataDir, 'broker-sessions')
  const everyMs = opts.everyMs ?? 10_000
  const marginMs = opts.marginMs ?? 60_000
  const kept = new Map<string, EventBus>()
  /** Sessions with a replay under way: their marks stay where the loss began. */
  const owing = new Set<string>()
  let stopped = false

  const fileOf = (clientId: string) => join(dir, `${clientId.replace(/[^\w.-]/g, '_')}.json`)
  const read = (clientId: string): Mark | null => {
    try {
      const m = JSON.parse(readFileSync(fileOf(clientId), 'utf8')) as Mark
      return typeof m.seen_at === 'string' ? m : null
    } catch {
      return null
    }
  }
  const write = (clientId: string, mark: Mark) => {
    mkdirSync(dir, { recursive: true })
    const file = fileOf(clientId)
    replaceJson(file, mark)
  }
  const touch = () => {
    const now = new Date().toISOString()
    for (const [clientId, bus] of kept)
      if (!owing.has(clientId) && bus.isConnected?.()) write(clientId, { seen_at: now })
  }

  /** Every instance of every part in another process that may have written these topics. */
  const producers = () =>
    (serviceNames as readonly ServiceName[])
      .filter((s) => !opts.local.includes(s))
      .flatMap((service) => opts.discovery.instances(service).map((url) => ({ service, url })))

  const replay = async (clientId: string, since: string, topics: readonly string[]) => {
    owing.add(clientId)
    write(clientId, { seen_at: since, owed_since: since })
    opts.log.warn('the broker lost this session; asking the other parts to publish again', {
      client_id: clientId,
      since,
      topics,
    })
    let republished = 0
    let unanswered = 0
    await Promise.all(
      producers().map(async ({ service, url }) => {
        const done = await retryUntilDone(
          async () => {
            const r = await opts.client.call<{ republished: number }>(
              service,
              HANDOFF_PATHS.replay,
              {
                method: 'POST',
                instance: url,
                headers: { [PURPOSE_HEADER]: PLATFORM_SYNC },
                body: { since, topics },
              },
            )
            republished += r.republished
          },
          {
            waiting: `waiting for ${service} to publish again what the broker lost`,
            log: opts.log,
            logEvery: 20,
            attempts: 240,
            stopped: () => stopped,
          },
        )
        if (!done) unanswered++
      }),
    )
    if (stopped) return
    if (unanswered > 0) {
      opts.log.error('parts did not publish again what the broker lost; asked at next start', {
        client_id: clientId,
        unanswered,
      })
      return
    }
    owing.delete(clientId)
    write(clientId, { seen_at: new Date().toISOString() })
    opts.log.info('events the broker lost were published again', {
      client_id: clientId,
      republished,
    })
  }

  const timer = setInterval(touch, everyMs)
  timer.unref?.()

  return {
    keep(bus, clientId) {
      kept.set(clientId, bus)
      bus.onSession?.((present, topics) => {
        if (stopped || owing.has(clientId)) return
        const mark = read(clientId)
        // No mark: this client's first connection ever, nothing was published for it yet.
        const lostAt = mark?.owed_since ?? (present ? null : mark?.seen_at)
        // Every part in this process (one `mmp serve`): its relays republish on their own.
        if (lostAt && topics.length > 0 && producers().length > 0) {
          void replay(clientId, new Date(Date.parse(lostAt) - marginMs).toISOString(), topics)
          return
        }
        if (!mark?.owed_since) write(clientId, { seen_at: new Date().toISOString() })
      })
    },
    stop() {
      if (stopped) return
      touch()
      stopped = true
      clearInterval(timer)
    },
  }
}
