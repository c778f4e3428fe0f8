import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { t } from 'elysia'
import { topics } from '../schema/events.ts'
import { topicRegistry } from '../schema/topic-registry.ts'
import { WEBHOOK_EVENTS } from '../schema/vocabulary.ts'
import { migrations } from '../schema/webhook/migrations.ts'
import {
  type AnyWebhookEventEntry,
  defineWebhookEvent,
  webhookEventNames,
  webhookEventRegistry,
  webhookEventsOf,
  webhookSourceTopics,
} from '../schema/webhook-events.ts'
import { createAsyncApi } from '../services/gateway/asyncapi.ts'
import type { ServiceInstance } from '../services/kernel/context.ts'
import { normalizeSchema } from '../services/kernel/openapi-schema.ts'
import { webhooksSection } from '../services/kernel/openapi-webhooks.ts'
import { createTestKit, type TestKit } from '../services/kernel/testing.ts'
import { mapSourceEvent } from '../services/webhook/consumers.ts'
import { listEventTypes } from '../services/webhook/event-types.ts'
import service from '../services/webhook/index.ts'
import type { WebhookSettings } from '../services/webhook/settings.ts'
import { api } from './support/client.ts'

/**
 * schema/webhook-events.ts is the one place a webhook event is declared: the event catalogue the
 * webhook service serves, the gateway's OpenAPI `webhooks` and AsyncAPI channels, the webhook
 * service's subscriptions and the topic registry all say what it says, and change when it changes.
 */

type Operation = {
  post: {
    description: string
    requestBody: { content: { 'application/json': { schema: { properties: { data: unknown } } } } }
  }
}
type Channel = { address: string; description: string }

const json = (x: unknown) => JSON.parse(JSON.stringify(x))

/** The registry with one more event, from the failure topic. */
const withAdded = {
  ...webhookEventRegistry,
  'example.added': {
    description: 'A payment was taken back',
    version: 2,
    source: topics.transactionsFailed,
    data: t.Object({ checkout_request_id: t.String() }),
    from: () => [],
  },
} satisfies Record<string, AnyWebhookEventEntry>

describe('the webhook event registry', () => {
  let kit: TestKit<WebhookSettings>
  let svc: ServiceInstance
  const subscribed: string[] = []

  beforeAll(async () => {
    kit = await createTestKit('webhook', {
      migrations,
      settings: {
        allowInsecure: true,
        allowHosts: [],
        retrySchedule: [0],
        timeoutMs: 1000,
        rateLimit: 1000,
        maxInFlight: 1,
        secretKey: Buffer.alloc(32, 7).toString('base64'),
      },
    })
    // Records what the service subscribes to, then subscribes as asked.
    const bus = kit.ctx.bus
    const subscribe = bus.subscribe.bind(bus)
    kit.ctx.bus = {
      ...bus,
      subscribe: (topic, handler) => {
        subscribed.push(topic)
        return subscribe(topic, handler)
      },
    }
    svc = await service.create(kit.ctx)
    await svc.start?.()
  })
  afterAll(async () => {
    await svc.stop?.()
    kit.cleanup()
  })

  it('names the same events as the dashboard list, in the same order', () => {
    expect(webhookEventNames).toEqual([...WEBHOOK_EVENTS])
  })

  it('is what the catalogue route serves', async () => {
    const client = api(svc.app, await kit.authFor({ tenantId: 'acme', role: 'Viewer' }))
    const res = await client.request('GET', '/api/v1/webhooks/event-types')
    expect(res.status).toBe(200)
    expect(res.body).toEqual(json(listEventTypes()))
    expect(
      res.body.data.map((e: { name: string; version: number; description: string }) => [
        e.name,
        e.version,
        e.description,
      ]),
    ).toEqual(webhookEventNames.map((n) => [n, 1, webhookEventRegistry[n].description]))
  })

  it('gives each catalogue entry its data schema', () => {
    for (const e of listEventTypes().data) {
      const entry = webhookEventRegistry[e.name as keyof typeof webhookEventRegistry]
      expect(e.schema).toEqual(json(entry.data))
    }
  })

  it('is the OpenAPI webhooks: one POST per event, its description and data schema', () => {
    const section = webhooksSection() as Record<string, Operation>
    expect(Object.keys(section)).toEqual(webhookEventNames)
    for (const name of webhookEventNames) {
      const op = section[name]!.post
      expect(op.description).toBe(webhookEventRegistry[name].description)
      const data = op.requestBody.content['application/json'].schema.properties.data
      expect(data).toEqual(normalizeSchema(webhookEventRegistry[name].data))
    }
  })

  it('names on each AsyncAPI channel the webhook events its topic becomes', () => {
    const channels = Object.values(createAsyncApi('0.0.0').channels as Record<string, Channel>)
    for (const c of channels) {
      const events = webhookEventNames.filter((n) => webhookEventRegistry[n].source === c.address)
      if (events.length)
        expect(c.description).toEndWith(`Webhook endpoints receive it as ${events.join(', ')}.`)
      else expect(c.description).not.toContain('Webhook endpoints')
    }
  })

  it('changes the catalogue, the OpenAPI webhooks and AsyncAPI when an event is added', () => {
    const catalogue = listEventTypes(withAdded).data
    expect(catalogue.map((e) => e.name)).toEqual([...webhookEventNames, 'example.added'])
    expect(catalogue.at(-1)).toMatchObject({ version: 2, description: 'A payment was taken back' })

    const section = webhooksSection(withAdded) as Record<string, Operation>
    expect(Object.keys(section)).toEqual([...webhookEventNames, 'example.added'])
    expect(section['example.added']!.post.description).toBe('A payment was taken back')
    expect(Object.keys(webhooksSection())).not.toContain('example.added')

    const channel = (doc: Record<string, unknown>) =>
      Object.values(doc.channels as Record<string, Channel>).find(
        (c) => c.address === topics.transactionsFailed,
      )!.description
    const before = webhookEventsOf(topics.transactionsFailed)
    expect(channel(createAsyncApi('0.0.0', withAdded))).toEndWith(
      `receive it as ${[...before, 'example.added'].join(', ')}.`,
    )
    expect(channel(createAsyncApi('0.0.0'))).toEndWith(`receive it as ${before.join(', ')}.`)
  })

  it('is what the webhook service subscribes to, as the topic registry declares', () => {
    // Besides the events' sources, webhook consumes tenants.changed to drop a deleted tenant's endpoints.
    expect([...subscribed].sort()).toEqual([...webhookSourceTopics, topics.tenantsChanged].sort())
    const declared = Object.entries(topicRegistry)
      .filter(([, roles]) => (roles.consumers as readonly string[]).includes('webhook'))
      .map(([topic]) => topic)
      .sort()
    expect([...subscribed].sort()).toEqual(declared)
  })

  it('turns a broker event into the deliveries its entries make', () => {
    const batch = {
      transactions: ['txn_1', 'txn_2'].map((id) => ({
        transaction_id: id,
        occurred_at: '2026-01-15T09:30:00.000Z',
        amount: 150,
        direction: 'in' as const,
        description: 'sale',
        source: 'sms' as const,
        category: 'Revenue',
      })),
    }
    const mapped = mapSourceEvent(topics.transactionsCategorized, { id: 'evt_1', data: batch })
    expect(mapped.map((m) => [m.event, m.key])).toEqual([
      ['transaction.categorized', 'txn_1|Revenue||'],
      ['transaction.categorized', 'txn_2|Revenue||'],
    ])
    const low = { balance: 5, threshold: 10, forecast_date: null, reason: 'balance' }
    expect(mapSourceEvent(topics.balanceLow, { id: 'evt_2', data: low })).toEqual([
      { event: 'low.balance.alert', data: low, key: 'evt_2#0' },
    ])
  })

  it('holds an entry to its topic and its schema (checked by tsc)', () => {
    const data = t.Object({ threshold: t.Number(), note: t.Optional(t.String()) })
    const right = defineWebhookEvent({
      description: 'x',
      version: 1,
      source: topics.balanceLow,
      data,
      from: (b) => [{ data: { threshold: b.threshold, ...(b.reason ? { note: b.reason } : {}) } }],
    })
    // @ts-expect-error `data` describes no `balance`
    defineWebhookEvent({
      description: 'x',
      version: 1,
      source: topics.balanceLow,
      data,
      from: (b) => [{ data: { threshold: b.threshold, balance: b.balance } }],
    })
    defineWebhookEvent({
      description: 'x',
      version: 1,
      source: topics.balanceLow,
      data,
      // @ts-expect-error `threshold` is missing
      from: (b) => [{ data: { note: b.reason } }],
    })
    defineWebhookEvent({
      description: 'x',
      version: 1,
      // @ts-expect-error the topic registry does not let webhook consume usage
      source: topics.usage,
      data,
      from: () => [],
    })
    const low = { balance: 1, threshold: 3, forecast_date: null, reason: 'balance' }
    expect(right.from(low)).toEqual([{ data: { threshold: 3, note: 'balance' } }])
  })
})
