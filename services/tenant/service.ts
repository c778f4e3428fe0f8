import { asc, eq } from 'drizzle-orm'
import { tenantMoves, tenants, tenantTombstones } from '../../schema/tenant/tables.ts'
import { eraseTenantData } from '../../tenants/move.ts'
import { type ServiceContext, serviceNames } from '../kernel/context.ts'
import {
  AppError,
  Conflict,
  invalidField,
  TenantNotFound,
  ValidationError,
} from '../kernel/errors.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { assertNewTenantId, assertTenantId } from '../kernel/tenant-id.ts'
import { applyFeatureChange, storeLayers } from './feature-layers.ts'
import type { CreateTenantInput, UpdateTenantInput } from './model.ts'
import { placementFor, resolvePlan } from './plan.ts'
import {
  assertFlags,
  assertTimezone,
  DEFAULT_TIMEZONE,
  effectiveFeatures,
  emitTenantChanged,
  findTenant,
  getTenantRow,
  mergeSettings,
  parseJson,
  placementOf,
  type TenantRow,
  termsOf,
  viewOf,
} from './profile.ts'
import { assertWritable, saveRow, tenantDb, tenantInPath } from './store.ts'
import { type CallInfo, createAuthUser, removeAllUsers, removeAuthUser } from './users.ts'

export function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '')
}

/** Creates a tenant, its placement profile and its first Admin (invited unless a password is given). */
export async function createTenant(ctx: ServiceContext, call: CallInfo, input: CreateTenantInput) {
  const id = assertNewTenantId(input.id ?? slugOf(input.name), 'id')
  const timezone = assertTimezone(input.timezone ?? DEFAULT_TIMEZONE)
  const settings = mergeSettings({}, input.settings ?? {})
  const db = tenantDb(ctx)
  if (findTenant(db, id) || ctx.registry.hasProfile(id))
    throw new Conflict(`tenant ${id} already exists`)
  const choice = await resolvePlan(ctx, call, input.plan ?? 'free')
  const where = placementFor(ctx, id, termsOf(choice).tier, input.database_path)
  const now = ctx.clock.now().toISOString()
  const row: TenantRow = {
    id,
    name: input.name.trim(),
    plan: choice.plan,
    planTerms: choice.planTerms,
    planRevision: 0,
    isolation: where.isolation,
    databasePath: where.databasePath,
    status: 'active',
    timezone,
    settings: JSON.stringify(settings),
    featureOverrides: '{}',
    instances: '{}',
    createdAt: now,
    updatedAt: now,
  }
  // The profile is what makes a tenant exist for every service, so it comes first: auth refuses
  // users of a tenant without one (an auth on its own data dir asks for it: pendingView). A
  // failure below takes it back.
  ctx.registry.setPlacement(id, placementOf(row))
  let admin: Awaited<ReturnType<typeof createAuthUser>> | null = null
  try {
    admin = await createAuthUser(ctx, call, {
      tenant_id: id,
      email: input.admin_email,
      role: 'Admin',
      ...(input.admin_password ? { password: input.admin_password } : {}),
    })
    db.write((orm) => {
      orm.insert(tenants).values(row).run()
      orm.delete(tenantTombstones).where(eq(tenantTombstones.id, id)).run()
      emitTenantChanged(db, ctx.clock, row, 'created')
    })
  } catch (caught) {
    const err = asTenantFields(caught)
    if (admin) await removeAuthUser(ctx, call, admin.id).catch(() => {})
    // A concurrent create of the same id owns the profile when the insert lost the race.
    if (/UNIQUE/.test((err as Error).message)) throw new Conflict(`tenant ${id} already exists`)
    ctx.registry.removePlacement(id)
    throw err
  }
  return {
    ...viewOf(row),
    admin_user_id: admin.id,
    ...(admin.invite_token
      ? {
          invite_token: admin.invite_token,
          invite_url: admin.invite_url,
          invite_expires_at: admin.expires_at,
        }
      : {}),
  }
}

/**
 * A tenant as the platform sees it: its row, or while its creation is under way (the profile
 * written, the first Admin being made, the row not yet in), what its profile says. An auth on its
 * own data dir asks for the tenant of that first Admin in between; a tenant's users cannot ask.
 */
export function tenantView(ctx: ServiceContext, actor: Actor, id: string) {
  try {
    return viewOf(tenantInPath(ctx, actor, id))
  } catch (err) {
    const pending =
      isOperator(actor) && ctx.registry.hasProfile(id) ? ctx.registry.placement(id) : null
    if (!(err instanceof TenantNotFound) || !pending?.as_of) throw err
    return {
      id,
      name: id,
      plan: pending.plan ?? 'free',
      isolation: pending.isolation,
      status: pending.status ?? 'active',
      features: pending.features ?? {},
      timezone: pending.timezone ?? DEFAULT_TIMEZONE,
      settings: {},
      database_path: pending.database_path ?? null,
      created_at: pending.as_of,
      updated_at: pending.as_of,
    }
  }
}

export function listTenants(ctx: ServiceContext) {
  return tenantDb(ctx).orm.select().from(tenants).orderBy(asc(tenants.createdAt)).all().map(viewOf)
}

export function updateTenant(
  ctx: ServiceContext,
  actor: Actor,
  id: string,
  input: UpdateTenantInput,
) {
  const row = tenantInPath(ctx, actor, id)
  assertWritable(actor, row)
  const next: TenantRow = { ...row }
  if (input.name !== undefined) next.name = input.name.trim()
  if (input.timezone !== undefined) next.timezone = assertTimezone(input.timezone)
  if (input.settings !== undefined) {
    next.settings = JSON.stringify(mergeSettings(parseJson(row.settings, {}), input.settings))
  }
  return viewOf(saveRow(ctx, next, 'updated'))
}

export function featureState(row: TenantRow) {
  const { layers: _, ...f } = effectiveFeatures(row)
  return { ...f.features, tenant_id: row.id, plan: row.plan, ...f }
}

/**
 * Sets feature switches (null returns a flag to the layer above). The operator's are a layer of
 * their own that the tenant cannot lift; a tenant Admin may switch features off, or back on within
 * what the plan and the operator allow (services/tenant/feature-layers.ts).
 */
export function setFeatures(
  ctx: ServiceContext,
  actor: Actor,
  id: string,
  body: Record<string, unknown>,
) {
  const row = tenantInPath(ctx, actor, id)
  assertWritable(actor, row)
  const nested = body.features
  const change = assertFlags(
    nested && typeof nested === 'object' && !Array.isArray(nested)
      ? (nested as Record<string, unknown>)
      : body,
  )
  const { defaults, layers } = effectiveFeatures(row)
  const next = applyFeatureChange({
    defaults,
    layers,
    change,
    byOperator: isOperator(actor),
    plan: row.plan,
  })
  return featureState(saveRow(ctx, { ...row, featureOverrides: storeLayers(next) }, 'updated'))
}

export function setStatus(ctx: ServiceContext, id: string, status: 'active' | 'suspended') {
  const row = getTenantRow(tenantDb(ctx), assertTenantId(id, 'tenant_id'))
  if (row.status === status) return viewOf(row)
  return viewOf(saveRow(ctx, { ...row, status }, status === 'suspended' ? 'suspended' : 'updated'))
}

/** Erases a tenant: its users (auth), its rows and files, then its record, with an event. */
export async function deleteTenant(
  ctx: ServiceContext,
  call: CallInfo,
  id: string,
  confirm: string | undefined,
) {
  const tenantId = assertTenantId(id, 'tenant_id')
  const db = tenantDb(ctx)
  const row = getTenantRow(db, tenantId)
  if (confirm !== tenantId) {
    throw invalidField('confirm', `must repeat the tenant id (?confirm=${tenantId}) to erase it`)
  }
  const users = await removeAllUsers(ctx, call, tenantId)
  const erased = eraseTenantData(ctx.registry, {
    tenantId,
    placement: placementOf(row),
    services: serviceNames,
  })
  db.write((orm) => {
    orm.delete(tenants).where(eq(tenants.id, tenantId)).run()
    orm.delete(tenantMoves).where(eq(tenantMoves.tenantId, tenantId)).run()
    orm
      .insert(tenantTombstones)
      .values({ id: tenantId, deletedAt: ctx.clock.now().toISOString() })
      .onConflictDoNothing()
      .run()
    emitTenantChanged(db, ctx.clock, { ...row, status: 'deleted' }, 'deleted')
  })
  ctx.log.info('tenant erased', { tenant_id: tenantId, ...erased, users })
  return { id: tenantId, deleted: true as const, users_removed: users, rows_erased: erased.rows }
}

/** Auth's complaints about the first Admin, named as the fields of this request. */
function asTenantFields(err: unknown): unknown {
  if (!(err instanceof AppError) || err.code !== 'VALIDATION_FAILED' || !err.errors) return err
  const renamed = err.errors.map((e) => ({
    field: e.field === 'password' || e.field === 'email' ? `admin_${e.field}` : e.field,
    message: e.message,
  }))
  return new ValidationError(renamed.map((e) => `${e.field}: ${e.message}`).join('; '), renamed)
}
