import { eq } from 'drizzle-orm'
import { isPlanId, type PlanId, plans } from '../../schema/plans.ts'
import { tenants, tenantTombstones } from '../../schema/tenant/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { assertTenantId, PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import {
  DEFAULT_TIMEZONE,
  emitTenantChanged,
  findTenant,
  type PlanTerms,
  placementOf,
  type TenantRow,
} from './profile.ts'
import { tenantDb } from './store.ts'
import { type CallInfo, listTenantUsers } from './users.ts'

/**
 * A tenant can exist before it has a record here: its users were made in auth directly
 * (`POST /api/v1/auth/users`), which is how tenants began before this service. The first time
 * such a tenant is addressed (by one of its own users, whose token proves it, or by the operator
 * when auth has users for it), its record is created from its placement profile, so plan changes
 * (billing's upgrade door included), features and invitations work for it. Erased tenants are
 * never brought back.
 */
export async function adoptImpliedTenant(
  ctx: ServiceContext,
  call: CallInfo,
  actor: Actor,
  id: string,
): Promise<void> {
  const tenantId = tenantFor(actor, assertTenantId(id, 'tenant_id'))
  const db = tenantDb(ctx)
  if (tenantId === PLATFORM_TENANT || findTenant(db, tenantId)) return
  const erased = db.orm
    .select({ id: tenantTombstones.id })
    .from(tenantTombstones)
    .where(eq(tenantTombstones.id, tenantId))
    .get()
  if (erased) return
  if (isOperator(actor)) {
    const users = await listTenantUsers(ctx, call, tenantId).catch(() => [])
    if (users.length === 0) return
  }
  const p = ctx.registry.placement(tenantId)
  const now = ctx.clock.now().toISOString()
  const row: TenantRow = {
    id: tenantId,
    name: tenantId,
    ...planOfPlacement(p),
    isolation: p.isolation,
    databasePath: p.isolation === 'database' ? (p.database_path ?? null) : null,
    status: p.status === 'suspended' ? 'suspended' : 'active',
    timezone: p.timezone ?? DEFAULT_TIMEZONE,
    settings: '{}',
    featureOverrides: '{}',
    createdAt: now,
    updatedAt: now,
  }
  const inserted = db.write((orm) => {
    if (findTenant(db, tenantId)) return false
    orm.insert(tenants).values(row).run()
    emitTenantChanged(db, ctx.clock, row, 'created')
    return true
  })
  if (!inserted) return
  ctx.registry.setPlacement(tenantId, placementOf(row))
  ctx.log.info('adopted a tenant known only from its users', { tenant_id: tenantId })
}

/**
 * The plan of an adopted tenant from its profile, without asking billing: a built-in plan as it is;
 * a custom plan keeps its id, with the tier its isolation implies, the features the profile shows
 * and that tier's user limit; no plan at all is free.
 */
function planOfPlacement(p: {
  plan?: string | undefined
  isolation: string
  features?: Record<string, boolean> | undefined
}): Pick<TenantRow, 'plan' | 'planTerms'> {
  if (isPlanId(p.plan)) return { plan: p.plan, planTerms: null }
  if (!p.plan) return { plan: 'free', planTerms: null }
  const tier: PlanId =
    p.isolation === 'database' ? 'enterprise' : p.isolation === 'schema' ? 'pro' : 'free'
  const terms: PlanTerms = {
    tier,
    features: p.features ?? { ...plans[tier].features },
    users: plans[tier].limits.users,
  }
  return { plan: p.plan, planTerms: JSON.stringify(terms) }
}
