import { EventEnvelope, type Topic, topicSchemas } from '../../schema/events.ts'
import { topicRegistry } from '../../schema/topic-registry.ts'
import {
  type WebhookEventRegistry,
  webhookEventRegistry,
  webhookEventsOf,
} from '../../schema/webhook-events.ts'
import { exampleOf } from '../kernel/openapi-examples.ts'
import { normalizeSchema } from '../kernel/openapi-schema.ts'

const keyOf = (topic: string) =>
  topic
    .replace(/^mobilemoney\./, '')
    .replace(/\.(\w)/g, (_, c: string) => c.toUpperCase())
    .replace(/^\w/, (c) => c.toUpperCase())

/**
 * Who publishes and who consumes a topic (`schema/topic-registry.ts`), and the webhook events it
 * becomes (`schema/webhook-events.ts`).
 */
const describeChannel = (topic: Topic, webhooks: WebhookEventRegistry) => {
  const { publishers, consumers } = topicRegistry[topic]
  const events = webhookEventsOf(topic, webhooks)
  const sent = events.length ? ` Webhook endpoints receive it as ${events.join(', ')}.` : ''
  return `Published by ${publishers.join(', ')}; consumed by ${consumers.join(', ')}; delivered at least once (consumers deduplicate by envelope id).${sent}`
}

/**
 * The broker's AsyncAPI 3 document (`/asyncapi.json`), generated from `schema/events.ts`: one
 * channel per topic, each message the envelope with that topic's `data` schema (DESIGN §7).
 */
export function createAsyncApi(
  version: string,
  webhooks: WebhookEventRegistry = webhookEventRegistry,
): Record<string, unknown> {
  const channels: Record<string, unknown> = {}
  const operations: Record<string, unknown> = {}
  const messages: Record<string, unknown> = {}
  const schemas: Record<string, unknown> = {}
  const { data: _, ...envelope } = EventEnvelope.properties
  for (const [topic, data] of Object.entries(topicSchemas)) {
    const key = keyOf(topic)
    const payload = normalizeSchema({
      ...EventEnvelope,
      properties: {
        ...envelope,
        type: { type: 'string', const: topic },
        data: { $ref: `#/components/schemas/${key}Data` },
      },
    }) as Record<string, unknown>
    schemas[`${key}Data`] = normalizeSchema(data)
    const example = exampleOf(payload, schemas)
    messages[key] = {
      name: topic,
      title: topic,
      contentType: 'application/json',
      payload,
      examples: [{ name: 'example', payload: example }],
    }
    channels[key] = {
      address: topic,
      description: describeChannel(topic as Topic, webhooks),
      messages: { [key]: { $ref: `#/components/messages/${key}` } },
    }
    operations[`receive${key}`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${key}` },
      messages: [{ $ref: `#/channels/${key}/messages/${key}` }],
    }
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'mmp broker events',
      version,
      description:
        'The topics services publish on the MQTT broker (schema/events.ts, the only cross-service contract). Every message is the envelope {id, type, version, tenant_id, occurred_at, data}.',
    },
    defaultContentType: 'application/json',
    servers: {
      broker: { host: 'localhost:1883', protocol: 'mqtt', description: 'the embedded broker' },
    },
    channels,
    operations,
    components: { messages, schemas },
  }
}
