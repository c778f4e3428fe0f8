import type { TenantRegistry } from '../../tenants/registry.ts'
import type { EventBus } from './bus.ts'
import type { Clock } from './clock.ts'
import type { Relay } from './events.ts'
import type { Hop } from './hop.ts'
import type { ServiceClient } from './http-client.ts'
import type { Logger } from './log.ts'
import type { TokenVerifier } from './tokens.ts'

export const serviceNames = [
  'analytics',
  'auth',
  'tenant',
  'parser',
  'cashflow',
  'payment',
  'billing',
  'categorizer',
  'webhook',
] as const
export type ServiceName = (typeof serviceNames)[number]

/**
 * What a service gets from the daemon: nothing global, everything passed in. `settings` is the
 * validated config slice of this service (see daemon/config.ts).
 */
export interface ServiceContext<S = Record<string, unknown>> {
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
  /** Extra health checks the service reports under `checks`. */
  checks: Map<string, () => Promise<HealthCheck> | HealthCheck>
}

export interface HealthCheck {
  status: 'ok' | 'degraded' | 'down'
  detail?: string
}

/** What `services/<name>/index.ts` exports by default: how the daemon starts the service. */
export interface ServiceModule {
  name: ServiceName
  /** Builds the service: its Elysia app and optional background jobs. */
  create(ctx: ServiceContext): ServiceInstance | Promise<ServiceInstance>
}

export interface ServiceInstance {
  app: { handle(request: Request): Promise<Response>; listen: any; stop: any; server: any }
  /** Background work (consumers, schedulers); started after the app listens. */
  start?(): Promise<void> | void
  /** Stops background work; in-flight requests are finished by the daemon. */
  stop?(): Promise<void> | void
}

/** Identity helper so a service file reads as a declaration. */
export function defineService(m: ServiceModule): ServiceModule {
  return m
}
