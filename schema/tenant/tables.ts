import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

export { idempotentRequests, inbox, outbox } from '../kernel.ts'

/**
 * The control-plane record of every tenant. The profile other services read (plan, isolation,
 * status, effective features, time zone) is mirrored to `tenants/<id>/placement.json`.
 */
export const tenants = sqliteTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  plan: text('plan').notNull(),
  isolation: text('isolation').notNull(),
  /** Enterprise only: the folder holding the tenant's database files. */
  databasePath: text('database_path'),
  status: text('status').notNull(),
  timezone: text('timezone').notNull(),
  /** JSON object of free-form tenant settings. */
  settings: text('settings').notNull().default('{}'),
  /** JSON object of per-tenant feature overrides over the plan's defaults. */
  featureOverrides: text('feature_overrides').notNull().default('{}'),
  /**
   * JSON `{tier, features, users}` of a custom plan (one billing defines), copied when the tenant
   * moved to it so later reads need no call; null on the built-in plans (schema/plans.ts).
   */
  planTerms: text('plan_terms'),
  /**
   * Billing's `plan_revision` of the plan last applied (0: none yet). A plan billing reports with
   * a revision not above it is already applied or superseded, and is ignored.
   */
  planRevision: integer('plan_revision').notNull().default(0),
  /**
   * JSON `{service: instance URL}`: where the tenant was moved to (`mmp tenant move --to`) on a
   * service that runs as several instances; elsewhere its instance is the rendezvous hash's.
   */
  instances: text('instances').notNull().default('{}'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
})

/**
 * A journal of data moves between isolation tiers, so a move interrupted by a crash is finished
 * (or cleaned up) when the service starts again.
 */
export const tenantMoves = sqliteTable(
  'tenant_moves',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    fromPlacement: text('from_placement').notNull(),
    toPlacement: text('to_placement').notNull(),
    state: text('state').notNull(),
    rows: text('rows'),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
  },
  (t) => [index('tenant_moves_state').on(t.state)],
)

/**
 * Ids of erased tenants (nothing else is kept), so a token issued before the erasure cannot bring
 * the tenant back as an implied tenant. Creating the id again removes its tombstone.
 */
export const tenantTombstones = sqliteTable('tenant_tombstones', {
  id: text('id').primaryKey(),
  deletedAt: text('deleted_at').notNull(),
})
