import type { TenantRegistry } from '../../tenants/registry.ts'
import type { EventBus } from './bus.ts'
import type { Clock } from './clock.ts'
import type { Relay } from './events.ts'
import type { Hop } from './hop.ts'
import type { ServiceClient } from './http-client.ts'
import type { Logger } from './log.ts'
import type { ServiceName } from './service-names.ts'
import type { TenantOwnership } from './tenant-owner.ts'
import type { TokenVerifier } from './tokens.ts'

export { type ServiceName, serviceNames } from './service-names.ts'

/**
 * What a service gets from the daemon: nothing global, everything passed in. `settings` is the
 * service's typed slice of the validated configuration: the service declares its type
 * (`AuthSettings`, `PaymentSettings`, …) and the daemon fills it with the settings that service
 * owns and the secrets it uses, nothing else (daemon/slices.ts). Code that does not read settings
 * takes `ServiceContext` (settings `unknown`), so any service's context fits it.
 */
export interface ServiceContext<S = unknown> {
  name: ServiceName
  version: string
  settings: S
  registry: TenantRegistry
  bus: EventBus
  relay: Relay
  tokens: TokenVerifier
  clock: Clock
  log: Logger
  client: ServiceClient
  /**
   * Verifies headers another part of the platform signed (client address, purpose). Without it
   * nothing such a header claims is trusted.
   */
  hop?: Hop
  /**
   * Which tenants this instance owns when the service runs as several instances (DESIGN §12):
   * its requests for other tenants are refused (421) and their events left alone. Absent: all.
   */
  ownership?: TenantOwnership
  /**
   * How many worker processes run this same service on the same data dir (`mmp serve --workers
   * N`); absent: one. More than one: what this process has in memory is not all that is in flight
   * (`hasSiblings`).
   */
  workers?: number
  /**
   * On a part without the tenant service on its data dir (DESIGN §12): asks the tenant service
   * about a tenant this part has not heard of yet, and keeps its profile when it exists (true).
   */
  learnTenant?: (tenantId: string) => Promise<boolean>
  /** Extra health checks the service reports under `checks`. */
  checks: Map<string, () => Promise<HealthCheck> | HealthCheck>
}

export interface HealthCheck {
  status: 'ok' | 'degraded' | 'down'
  detail?: string
}

/** Whether sibling worker processes run this service beside this one (`ServiceContext.workers`). */
export const hasSiblings = (ctx: Pick<ServiceContext, 'workers'>): boolean => (ctx.workers ?? 1) > 1

/** The settings slice of a service that owns no setting. */
export type NoSettings = Record<string, never>

/** What `services/<name>/index.ts` exports by default: how the daemon starts the service. */
export interface ServiceModule<S = unknown> {
  name: ServiceName
  /** Builds the service from its context, `settings` being its own typed slice. */
  create(ctx: ServiceContext<S>): ServiceInstance | Promise<ServiceInstance>
}

export interface ServiceInstance {
  app: { handle(request: Request): Promise<Response>; listen: any; stop: any; server: any }
  /** Background work (consumers, schedulers); started after the app listens. */
  start?(): Promise<void> | void
  /** Stops background work; in-flight requests are finished by the daemon. */
  stop?(): Promise<void> | void
}

/**
 * Identity helper so a service file reads as a declaration, typed by its settings slice.
 *
 * @example
 * export default defineService<BillingSettings>({ name: 'billing', create: (ctx) => … })
 */
export function defineService<S>(m: ServiceModule<S>): ServiceModule<S> {
  return m
}
