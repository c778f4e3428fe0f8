import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { EventEnvelope, type Topic, type TopicEvent, topicSchemas } from '../../schema/events.ts'
import type { TopicsOf } from '../../schema/topic-registry.ts'
import { FENCED_ELSEWHERE } from '../../tenants/move-fence.ts'
import type { EventBus } from './bus.ts'
import type { Logger } from './log.ts'
import { counter } from './metrics.ts'
import type { TenantOwnership } from './tenant-owner.ts'

const envelope = TypeCompiler.Compile(EventEnvelope)
const checkers = new Map<Topic, TypeCheck<any>>()

function checkerOf(topic: Topic): TypeCheck<any> {
  let c = checkers.get(topic)
  if (!c) {
    c = TypeCompiler.Compile(topicSchemas[topic])
    checkers.set(topic, c)
  }
  return c
}

/**
 * Why an event does not fit its topic's contract (the first error, as `path: message`), or null
 * when it fits.
 *
 * @example
 * explainMalformed(topics.usage, event) // '/data/quantity: Expected integer'
 */
export function explainMalformed(topic: Topic, event: unknown): string | null {
  if (!envelope.Check(event)) return describe(envelope, event, '')
  const data = checkerOf(topic)
  const e = event as EventEnvelope
  if (e.type !== topic) return `/type: expected ${topic}`
  if (!data.Check(e.data)) return describe(data, e.data, '/data')
  return null
}

function describe(check: TypeCheck<any>, value: unknown, prefix: string): string {
  const first = check.Errors(value).First()
  return first ? `${prefix}${first.path}: ${first.message}` : `${prefix}: invalid`
}

/**
 * Subscribes `consumer` to a topic of `schema/events.ts`; `schema/topic-registry.ts` must declare it
 * a consumer of that topic (a compile error otherwise). The envelope and its data are checked
 * against the topic's schema first: a malformed event (a retry would not fix it) is dropped with
 * one log line and `mmp_events_malformed_total{topic,consumer}`; the handler only ever sees
 * events that fit, typed by topic. Handler errors go to the bus, which retries (DESIGN §7).
 *
 * When the service runs as several instances (`ownership`, DESIGN §12), every instance receives
 * every event and applies only those of the tenants it owns; the others are acknowledged without
 * a trace, not even an inbox row, so the instance a tenant later moves to still applies them on
 * replay. (MQTT shared subscriptions would spread events over instances, not by tenant.) So is
 * an event of a tenant whose move to another instance fenced it here.
 *
 * @example
 * await subscribe(ctx, 'analytics', topics.transactionsRaw, (event) => {
 *   ingest(event.tenant_id, event.data.transactions)
 * })
 */
export async function subscribe<C extends string, T extends TopicsOf<C>>(
  deps: { bus: EventBus; log: Logger; ownership?: TenantOwnership | undefined },
  consumer: C,
  topic: T,
  handler: (event: TopicEvent<T>) => Promise<void> | void,
): Promise<void> {
  const ownership = deps.ownership
  await deps.bus.subscribe(topic, async (event) => {
    const tenant = (event as { tenant_id?: unknown } | null)?.tenant_id
    if (ownership && typeof tenant === 'string' && !ownership.owns(tenant)) {
      eventsElsewhere.inc({ topic, consumer })
      return
    }
    const why = explainMalformed(topic, event)
    if (why !== null) {
      eventsMalformed.inc({ topic, consumer })
      deps.log.warn('dropped a malformed event', {
        topic,
        consumer,
        event_id: (event as { id?: unknown } | null)?.id,
        error: why,
      })
      return
    }
    try {
      await handler(event as TopicEvent<T>)
    } catch (err) {
      // The tenant is moving to another instance (tenants/handoff.ts): the move replays its
      // events there once it is in place, so retrying here would only hold up other tenants.
      if (!movedElsewhere(err)) throw err
      eventsElsewhere.inc({ topic, consumer })
    }
  })
}

/** Whether a handler failed on a handoff fence (one `cause` deep, as drizzle wraps errors). */
const movedElsewhere = (err: unknown): boolean =>
  [err, (err as Error | null)?.cause].some((e) =>
    FENCED_ELSEWHERE.test(String((e as Error | null)?.message ?? '')),
  )

export const eventsMalformed = counter(
  'mmp_events_malformed_total',
  'Events a consumer dropped because they do not fit their topic schema',
  ['topic', 'consumer'],
)

export const eventsElsewhere = counter(
  'mmp_events_elsewhere_total',
  'Events a consumer left to the instance that owns their tenant',
  ['topic', 'consumer'],
)
