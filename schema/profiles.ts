import { type Static, t } from 'elysia'

/**
 * The two small files every service reads about a tenant without a call, each written by one
 * module of its owner and checked against these schemas when read:
 * - `tenants/<id>/placement.json`, the tenant profile, written by the tenant service (through
 *   the registry's `setPlacement`): where the tenant's data lives and its plan, status, features
 *   and time zone;
 * - `tenants/<id>/entitlements.json`, written by billing (`writeEntitlements`): what the tenant
 *   may do right now, its limits and what it used this period.
 */
export const Isolation = t.Union([t.Literal('shared'), t.Literal('schema'), t.Literal('database')])
export type Isolation = Static<typeof Isolation>

export const TenantProfile = t.Object({
  isolation: Isolation,
  /** For 'database': the folder holding the tenant's database files. */
  database_path: t.Optional(t.String()),
  plan: t.Optional(t.String()),
  status: t.Optional(t.String()),
  features: t.Optional(t.Record(t.String(), t.Boolean())),
  timezone: t.Optional(t.String()),
  /** The instance a tenant was moved to per partitioned service (`mmp tenant move --to`). */
  instances: t.Optional(t.Record(t.String(), t.String())),
  /**
   * On a part with its own data dir: when the tenant service's view it was built from was
   * current (daemon/profiles.ts), so an older event arriving late is ignored.
   */
  as_of: t.Optional(t.String()),
})
export type TenantProfile = Static<typeof TenantProfile>

export const METRICS = [
  'transactions',
  'statements',
  'payments',
  'api_calls',
  'users',
  'webhook_endpoints',
] as const
export type Metric = (typeof METRICS)[number]

export const Entitlements = t.Object({
  plan: t.String(),
  status: t.Union([
    t.Literal('trialing'),
    t.Literal('active'),
    t.Literal('past_due'),
    t.Literal('suspended'),
    t.Literal('canceled'),
  ]),
  period_start: t.String(),
  period_end: t.String(),
  /** null: unlimited. */
  limits: t.Record(t.String(), t.Union([t.Number(), t.Null()])),
  used: t.Record(t.String(), t.Number()),
  updated_at: t.String(),
})
/** The checked file, with its metrics named. */
export interface Entitlements {
  plan: string
  status: 'trialing' | 'active' | 'past_due' | 'suspended' | 'canceled'
  period_start: string
  period_end: string
  /** null: unlimited. */
  limits: Partial<Record<Metric, number | null>>
  used: Partial<Record<Metric, number>>
  updated_at: string
}
