import type { Topic } from './events.ts'
import type { Owner } from './routes.ts'

/**
 * Who publishes and who consumes each broker topic of `schema/events.ts`, declared once. The
 * kernel's `subscribe` only accepts a consumer declared for the topic (a compile error otherwise);
 * the AsyncAPI document (gateway) and ARCHITECTURE.md (`bun scripts/architecture-doc.ts`) are
 * generated from here, and test/architecture-doc.test.ts fails when the code publishes or
 * consumes a topic other than what is declared.
 *
 * Adding a topic: its name and data schema in `schema/events.ts`, its entry here (the compiler asks
 * for one), then the `emitEvent` in the publisher and the `subscribe` in each consumer.
 */

/** Each consumer by the name it subscribes with (its inbox key), and where it lives. */
export const consumerHomes = {
  analytics: 'services/analytics',
  billing: 'services/billing',
  cashflow: 'services/cashflow',
  categorizer: 'services/categorizer',
  parser: 'services/parser',
  tenant: 'services/tenant',
  webhook: 'services/webhook',
  profiles: 'daemon/profiles.ts',
  entitlements: 'daemon/profiles.ts',
  revocations: 'daemon/revocations.ts',
} as const

export type Consumer = keyof typeof consumerHomes

interface TopicRoles {
  readonly publishers: readonly Owner[]
  readonly consumers: readonly Consumer[]
}

export const topicRegistry = {
  'mobilemoney.transactions.success': {
    publishers: ['payment'],
    consumers: ['billing', 'categorizer', 'parser', 'webhook'],
  },
  'mobilemoney.transactions.failed': { publishers: ['payment'], consumers: ['billing', 'webhook'] },
  'mobilemoney.transactions.raw': {
    publishers: ['parser'],
    consumers: ['analytics', 'categorizer'],
  },
  'mobilemoney.transactions.categorized': {
    publishers: ['categorizer'],
    consumers: ['analytics', 'cashflow', 'webhook'],
  },
  'mobilemoney.statements.processed': {
    publishers: ['parser'],
    consumers: ['cashflow', 'webhook'],
  },
  'mobilemoney.usage': { publishers: ['parser', 'payment'], consumers: ['billing'] },
  'mobilemoney.subscriptions.changed': {
    publishers: ['billing'],
    consumers: ['tenant', 'webhook'],
  },
  'mobilemoney.balance.low': { publishers: ['cashflow'], consumers: ['webhook'] },
  'mobilemoney.tenants.changed': {
    publishers: ['tenant'],
    consumers: ['billing', 'profiles', 'webhook'],
  },
  'mobilemoney.auth.revoked': { publishers: ['auth'], consumers: ['revocations'] },
  'mobilemoney.balance.reported': { publishers: ['payment'], consumers: ['cashflow'] },
  'mobilemoney.entitlements.changed': { publishers: ['billing'], consumers: ['entitlements'] },
} as const satisfies Record<Topic, TopicRoles>

/**
 * The topics `C` may subscribe to. Names starting `test-` are the kernel's own tests' consumers,
 * which may subscribe to anything.
 */
export type TopicsOf<C extends string> = C extends `test-${string}`
  ? Topic
  : {
      [T in Topic]: C extends (typeof topicRegistry)[T]['consumers'][number] ? T : never
    }[Topic]
