import type { TenantRegistry } from '../../tenants/registry.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import type { Logger } from '../kernel/log.ts'
import type { SecretBox } from './secret-box.ts'
import type { WebhookConfig } from './settings.ts'
import type { Resolver } from './ssrf.ts'

/** What the webhook verbs work with (explicit, no framework objects). */
export interface WebhookDeps {
  /** `platform/webhook.db`: endpoints, deliveries and attempts of every tenant, by tenant_id. */
  db: Db
  config: WebhookConfig
  clock: Clock
  registry: TenantRegistry
  log: Logger
  resolve: Resolver
  /** Seals signing secrets in the database and opens them to sign. */
  secrets: SecretBox
  /** Tells the dispatcher that endpoints changed or got due deliveries. */
  notify: {
    enqueued(endpointIds: Iterable<string>): void
    endpointChanged(endpointId: string): void
  }
}
