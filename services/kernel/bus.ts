import type { MqttClient } from 'mqtt'
import type { EventEnvelope } from '../../schema/events.ts'
import { type BackoffStep, exponentialBackoff, nextWait } from './backoff.ts'
import type { Logger } from './log.ts'

export type EventHandler = (event: EventEnvelope) => Promise<void> | void

/**
 * Transport for events. The broker is transport only: durability comes from the outbox and inbox
 * (DESIGN §7, §13).
 *
 * @example
 * await bus.subscribe('mobilemoney.transactions.raw', (e) => handle(e))
 * await bus.publish('mobilemoney.transactions.raw', envelope)
 */
export interface EventBus {
  publish(topic: string, event: EventEnvelope): Promise<void>
  subscribe(topic: string, handler: EventHandler): Promise<void>
  /**
   * Every handler of this process is registered: a bus created `deferred` connects now (a
   * publish before this waits for it).
   */
  ready?(): Promise<void>
  /** Called each time the connection to the broker is made again after it was lost. */
  onReconnect?(fn: () => void): void
  /**
   * Called after each connection to the broker (the first and every one after), once this
   * process's subscriptions hold: `present` is false when the broker had no session for this
   * client, so whatever it queued for the client while it was away is gone (DESIGN §13).
   */
  onSession?(fn: SessionListener): void
  /** Whether the connection to the broker is up right now. */
  isConnected?(): boolean
  /**
   * Whether a publish now goes out at once on a connection of its own, leaving the service's
   * broker session alone (a standby worker's, lazyBus `publisher`).
   */
  publishesAside?(): boolean
  close(): Promise<void>
}

export type SessionListener = (present: boolean, topics: readonly string[]) => void

export interface MqttBusOptions {
  url: string
  username?: string | undefined
  password?: string | undefined
  /** A stable client id gives a persistent session on brokers that keep them. */
  clientId: string
  log: Logger
  /**
   * Connect at `ready()` rather than now. With a persistent session the broker sends what it
   * queued for this client as soon as it connects, before any SUBSCRIBE: a message of a topic
   * whose handler is not registered yet would be acknowledged unhandled, so lost.
   */
  deferred?: boolean
}

/**
 * MQTT QoS 1. A message is acknowledged only after its handler finished (`handleMessage`), so a
 * broker that keeps sessions redelivers what a crashed consumer did not finish.
 */
export async function createMqttBus(opts: MqttBusOptions): Promise<EventBus> {
  const handlers = new Map<string, EventHandler[]>()
  const reconnected: Array<() => void> = []
  const sessions: SessionListener[] = []
  /** Whether the first connection found a session; null until it is made. */
  let firstPresent: boolean | null = null
  const tell = (present: boolean) => {
    for (const fn of sessions) fn(present, [...handlers.keys()])
  }
  /** Set by close: a handler still failing then leaves its message unacknowledged. */
  let closing = false
  const deliver = (packet: { topic: string; payload: string | Buffer }, done: () => void) => {
    const list = handlers.get(packet.topic)
    if (!list) return done()
    let event: EventEnvelope
    try {
      event = JSON.parse(packet.payload.toString())
    } catch {
      opts.log.warn('dropped a message that is not JSON', { topic: packet.topic })
      return done()
    }
    // Acknowledged once every handler has applied it (or dropped it on purpose). One that still
    // fails when the bus closes leaves it unacknowledged: the session hands it over again.
    Promise.all(
      list.map((h) =>
        runWithRetry(h, { event, log: opts.log, topic: packet.topic, giveUp: () => closing }),
      ),
    ).then((applied) => {
      if (applied.every(Boolean)) done()
    })
  }
  let client: MqttClient | null = null
  const open = async (): Promise<MqttClient> => {
    // Loaded on the first connection: a process answers requests before it needs the broker.
    const { default: mqtt } = await import('mqtt')
    return new Promise((resolve, reject) => {
      const c = mqtt.connect(opts.url, {
        clientId: opts.clientId,
        clean: false,
        username: opts.username,
        password: opts.password,
        reconnectPeriod: 500,
        connectTimeout: 5000,
        protocolVersion: 4,
      })
      // Set before the first packet can arrive: messages the session queued come with the
      // connection, and mqtt.js's default would acknowledge them unhandled.
      c.handleMessage = deliver
      const failed = (err: Error) => {
        c.end()
        reject(err)
      }
      c.once('error', failed)
      c.once('connect', async (connack) => {
        c.off('error', failed)
        c.on('error', (err) => opts.log.warn('broker connection error', { error: err.message }))
        // Every 'connect' from here on is a reconnection.
        c.on('connect', (again) => {
          for (const fn of reconnected) fn()
          if (sessions.length === 0) return
          // mqtt.js subscribes a lost session again by itself; the SUBACK is awaited here so
          // that whatever a listener asks to be sent again finds the subscriptions in place.
          const topics = [...handlers.keys()]
          const subscribed =
            again.sessionPresent || topics.length === 0
              ? Promise.resolve()
              : c.subscribeAsync(topics, { qos: 1 }).then(() => {})
          subscribed.then(
            () => tell(again.sessionPresent),
            (err) => opts.log.warn('subscribing again failed', { error: (err as Error).message }),
          )
        })
        try {
          // A new session (or a broker that lost it) learns what this process consumes.
          if (handlers.size > 0) await c.subscribeAsync([...handlers.keys()], { qos: 1 })
          client = c
          firstPresent = connack.sessionPresent
          resolve(c)
          tell(connack.sessionPresent)
        } catch (err) {
          failed(err as Error)
        }
      })
    })
  }
  let connecting: Promise<MqttClient> | null = null
  const connected = () => {
    connecting ??= open().catch((err) => {
      connecting = null
      throw err
    })
    return connecting
  }
  if (!opts.deferred) await connected()
  /** A deferred bus is ready once `ready()` was called: its session must not open earlier. */
  let readied = () => {}
  const isReady = opts.deferred ? new Promise<void>((r) => (readied = r)) : Promise.resolve()
  return {
    async publish(topic, event) {
      await isReady
      await (await connected()).publishAsync(topic, JSON.stringify(event), { qos: 1 })
    },
    async subscribe(topic, handler) {
      const list = handlers.get(topic) ?? []
      list.push(handler)
      handlers.set(topic, list)
      if (list.length > 1) return
      // Not connected yet: `open` subscribes every topic registered by then (a duplicate
      // SUBSCRIBE while it is under way changes nothing).
      const c = client ?? (connecting ? await connecting : null)
      if (c) await c.subscribeAsync(topic, { qos: 1 })
    },
    async ready() {
      await connected()
      readied()
    },
    onReconnect(fn) {
      reconnected.push(fn)
    },
    onSession(fn) {
      sessions.push(fn)
      // Registered after the first connection: told how that one went.
      if (firstPresent !== null) fn(firstPresent, [...handlers.keys()])
    },
    isConnected: () => client?.connected ?? false,
    async close() {
      closing = true
      const c = client ?? (connecting ? await connecting.catch(() => null) : null)
      await c?.endAsync()
    },
  }
}

/** The pause between two attempts at a failing handler: 100 ms doubling to 30 s. */
const HANDLER_BACKOFF = exponentialBackoff({ initialMs: 100, maxMs: 30_000 })
/** A handler that keeps failing is logged at its 5th attempt, then once a minute. */
const LOG_EVERY_MS = 60_000

/**
 * Runs a handler until it applies the event; whether it did. A failure is tried again, 100 ms
 * doubling to 30 s apart, for as long as it takes: the event's outbox row is marked sent once the
 * broker took it, so an event acknowledged unapplied would be lost (DESIGN §7). The consumer's
 * later messages wait meanwhile, as a stalled queue does, and the log says why. Only an event of
 * an erased tenant is dropped; `giveUp` (a bus closing) stops the attempts and leaves the event
 * to the session (false).
 */
async function runWithRetry(
  handler: EventHandler,
  {
    event,
    log,
    topic,
    giveUp,
  }: { event: EventEnvelope; log: Logger; topic: string; giveUp: (attempts: number) => boolean },
): Promise<boolean> {
  let loggedAt = 0
  let backoff: BackoffStep | undefined
  for (let attempt = 1; ; attempt++) {
    try {
      await handler(event)
      return true
    } catch (err) {
      // An event of an erased tenant has nothing left to apply to: dropped, not retried.
      if ((err as { code?: string }).code === 'TENANT_NOT_FOUND') {
        log.info('event of a tenant that no longer exists dropped', {
          topic,
          event_id: event.id,
          tenant_id: event.tenant_id,
        })
        return true
      }
      if (attempt >= 5 && Date.now() - loggedAt >= LOG_EVERY_MS) {
        loggedAt = Date.now()
        log.error('event handler keeps failing; retrying, and later events wait', {
          topic,
          event_id: event.id,
          attempts: attempt,
          error: (err as Error).message,
        })
      }
      if (giveUp(attempt)) return false
      backoff = nextWait(HANDLER_BACKOFF, backoff)
      await Bun.sleep(backoff.duration)
      if (giveUp(attempt)) return false
    }
  }
}

/** In-process bus for unit tests and benchmarks: delivery is immediate and in order. */
export function createMemoryBus(log?: Logger): EventBus & { published: EventEnvelope[] } {
  const handlers = new Map<string, EventHandler[]>()
  const published: EventEnvelope[] = []
  return {
    published,
    async publish(topic, event) {
      published.push(event)
      const copy = JSON.parse(JSON.stringify(event)) as EventEnvelope
      for (const h of handlers.get(topic) ?? []) {
        // No session keeps it here: a test's handler gets 5 attempts.
        if (log)
          await runWithRetry(h, { event: copy, log, topic, giveUp: (attempts) => attempts >= 5 })
        else await h(copy)
      }
    },
    async subscribe(topic, handler) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler])
    },
    async close() {},
  }
}
