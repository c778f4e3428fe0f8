import type { EventBus, SessionListener } from './bus.ts'

/**
 * A bus that connects on first use. A standby worker (`mmp serve --workers N`) neither subscribes
 * nor relays until it takes over the background work, and its service's stable client id must
 * not take the broker session away from the worker that holds it meanwhile: a session taken over
 * hands its queued messages to a connection with no handler for them, which acknowledges them
 * unhandled. What such a worker is asked to publish itself (a moved tenant's events, republished)
 * goes, until `ready()`, through `publisher`: a connection of its own that subscribes to nothing.
 */
export function lazyBus(
  connect: () => Promise<EventBus>,
  opts: { publisher?: () => Promise<EventBus> } = {},
): EventBus & { connected: boolean } {
  let ready = false
  let aside: Promise<EventBus> | null = null
  const publisher = (make: () => Promise<EventBus>) => {
    aside ??= make().catch((err) => {
      aside = null
      throw err
    })
    return aside
  }
  const publishesAside = () => !ready && opts.publisher !== undefined
  let bus: Promise<EventBus> | null = null
  /** Handed to the bus once it connects: asking for them must not connect it. */
  const reconnected: Array<() => void> = []
  const sessions: SessionListener[] = []
  let made: EventBus | null = null
  const get = () => {
    bus ??= connect().then(
      (b) => {
        for (const fn of reconnected) b.onReconnect?.(fn)
        for (const fn of sessions) b.onSession?.(fn)
        made = b
        return b
      },
      (err) => {
        bus = null
        throw err
      },
    )
    return bus
  }
  return {
    get connected() {
      return bus !== null
    },
    publish: async (topic, event) =>
      (publishesAside() ? await publisher(opts.publisher!) : await get()).publish(topic, event),
    publishesAside,
    subscribe: async (topic, handler) => (await get()).subscribe(topic, handler),
    // Called where the background work starts (a standby worker never calls it): a deferred
    // bus's publishes wait for it.
    ready: async () => {
      ready = true
      await (await get()).ready?.()
    },
    onReconnect(fn) {
      reconnected.push(fn)
      if (bus)
        void bus.then(
          (b) => b.onReconnect?.(fn),
          () => {},
        )
    },
    onSession(fn) {
      sessions.push(fn)
      if (bus)
        void bus.then(
          (b) => b.onSession?.(fn),
          () => {},
        )
    },
    isConnected: () => made?.isConnected?.() ?? false,
    async close() {
      if (aside) await (await aside.catch(() => null))?.close()
      if (bus) await (await bus).close()
    },
  }
}
