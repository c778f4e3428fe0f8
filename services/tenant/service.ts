import { asc, eq } from 'drizzle-orm'
import { type PlanId, plans } from '../../schema/plans.ts'
import { tenantMoves, tenants } from '../../schema/tenant/tables.ts'
import { eraseTenantData, moveTenantData, purgeTenantRows } from '../../tenants/move.ts'
import type { Placement } from '../../tenants/registry.ts'
import { type ServiceContext, serviceNames } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { AppError, Conflict, Forbidden, invalidField } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { assertNewTenantId, assertTenantId } from '../kernel/tenant-id.ts'
import type { CreateTenantInput, UpdateTenantInput } from './model.ts'
import {
  assertDatabasePath,
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
  viewOf,
} from './profile.ts'
import { type CallInfo, createAuthUser, removeAllUsers } from './users.ts'

export const tenantDb = (ctx: ServiceContext) => ctx.registry.platform('tenant')

/** The tenant named in a path: well-formed (422), the actor's own (403), existing (404). */
export function tenantInPath(ctx: ServiceContext, actor: Actor, id: string): TenantRow {
  const tenantId = tenantFor(actor, assertTenantId(id, 'tenant_id'))
  return getTenantRow(tenantDb(ctx), tenantId)
}

/** Changes by a tenant's own users are refused while the operator has it suspended. */
function assertWritable(actor: Actor, row: TenantRow): void {
  if (row.status === 'suspended' && !isOperator(actor)) {
    throw new Forbidden(`tenant ${row.id} is suspended; only reads are allowed`)
  }
}

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

function placementFor(
  ctx: ServiceContext,
  tenantId: string,
  plan: PlanId,
  databasePath: string | undefined,
): { isolation: Placement['isolation']; databasePath: string | null } {
  const isolation = plans[plan].isolation
  if (isolation !== 'database') return { isolation, databasePath: null }
  const path = databasePath
    ? assertDatabasePath(ctx.registry.dataDir, databasePath, tenantId)
    : `tenants/${tenantId}`
  const taken = tenantDb(ctx)
    .orm.select({ id: tenants.id })
    .from(tenants)
    .where(eq(tenants.databasePath, path))
    .all()
    .filter((r) => r.id !== tenantId)
  if (taken.length) throw new Conflict(`database_path ${path} is used by another tenant`)
  return { isolation, databasePath: path }
}

/** Creates a tenant, its placement profile and its first Admin (invited unless a password is given). */
export async function createTenant(ctx: ServiceContext, call: CallInfo, input: CreateTenantInput) {
  const id = assertNewTenantId(input.id ?? slugOf(input.name), 'id')
  const plan = input.plan ?? 'free'
  const timezone = assertTimezone(input.timezone ?? DEFAULT_TIMEZONE)
  const settings = mergeSettings({}, input.settings ?? {})
  const db = tenantDb(ctx)
  if (findTenant(db, id)) throw new Conflict(`tenant ${id} already exists`)
  if (input.database_path && plans[plan].isolation !== 'database') {
    throw invalidField('database_path', 'only the enterprise plan has a dedicated location')
  }
  const where = placementFor(ctx, id, plan, input.database_path)
  const admin = await createAuthUser(ctx, call, {
    tenant_id: id,
    email: input.admin_email,
    role: 'Admin',
    ...(input.admin_password ? { password: input.admin_password } : {}),
  })
  const now = ctx.clock.now().toISOString()
  const row: TenantRow = {
    id,
    name: input.name.trim(),
    plan,
    isolation: where.isolation,
    databasePath: where.databasePath,
    status: 'active',
    timezone,
    settings: JSON.stringify(settings),
    featureOverrides: '{}',
    createdAt: now,
    updatedAt: now,
  }
  try {
    db.write((orm) => {
      orm.insert(tenants).values(row).run()
      emitTenantChanged(db, ctx.clock, row, 'created')
    })
  } catch (err) {
    await removeAllUsers(ctx, call, id).catch(() => {})
    if (/UNIQUE/.test((err as Error).message)) throw new Conflict(`tenant ${id} already exists`)
    throw err
  }
  ctx.registry.setPlacement(id, placementOf(row))
  return {
    ...viewOf(row),
    admin_user_id: admin.id,
    ...(admin.invite_token
      ? { invite_token: admin.invite_token, invite_expires_at: admin.expires_at }
      : {}),
  }
}

export function listTenants(ctx: ServiceContext) {
  return tenantDb(ctx).orm.select().from(tenants).orderBy(asc(tenants.createdAt)).all().map(viewOf)
}

/** Writes a changed row, its placement profile and a `tenants.changed` event. */
function saveRow(
  ctx: ServiceContext,
  row: TenantRow,
  change: 'updated' | 'suspended',
  extra?: (db: Db) => void,
): TenantRow {
  const db = tenantDb(ctx)
  const next = { ...row, updatedAt: ctx.clock.now().toISOString() }
  db.write((orm) => {
    orm.update(tenants).set(next).where(eq(tenants.id, row.id)).run()
    extra?.(db)
    emitTenantChanged(db, ctx.clock, next, change)
  })
  ctx.registry.setPlacement(row.id, placementOf(next))
  return next
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
  const f = effectiveFeatures(row)
  return { ...f.features, tenant_id: row.id, plan: row.plan, ...f }
}

/**
 * Sets feature overrides over the plan's defaults (null returns a flag to its default). A tenant
 * Admin may switch features off, or on within the plan; granting a feature the plan lacks is the
 * operator's call.
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
  const flags = assertFlags(
    nested && typeof nested === 'object' && !Array.isArray(nested)
      ? (nested as Record<string, unknown>)
      : body,
  )
  const { defaults, overrides } = effectiveFeatures(row)
  for (const [k, v] of Object.entries(flags)) {
    if (v === true && defaults[k] !== true && !isOperator(actor)) {
      throw new AppError(
        'FEATURE_DISABLED',
        `the ${row.plan} plan does not include ${k}; upgrade the plan or ask the operator`,
        { extra: { feature: k, plan: row.plan } },
      )
    }
    if (v === null || defaults[k] === v) delete overrides[k]
    else overrides[k] = v
  }
  return featureState(
    saveRow(ctx, { ...row, featureOverrides: JSON.stringify(overrides) }, 'updated'),
  )
}

export function setStatus(ctx: ServiceContext, id: string, status: 'active' | 'suspended') {
  const row = getTenantRow(tenantDb(ctx), assertTenantId(id, 'tenant_id'))
  if (row.status === status) return viewOf(row)
  return viewOf(saveRow(ctx, { ...row, status }, status === 'suspended' ? 'suspended' : 'updated'))
}

/**
 * Changes a tenant's plan and, with it, its isolation tier and feature defaults; the tenant's rows
 * move to the new tier's databases before the placement switches (tenants/move.ts). Billing
 * follows the `tenants.changed` event to prorate.
 */
export function upgradeTenant(
  ctx: ServiceContext,
  actor: Actor,
  id: string,
  input: { plan: PlanId; database_path?: string | undefined },
) {
  const row = tenantInPath(ctx, actor, id)
  if (input.database_path !== undefined && !isOperator(actor)) {
    throw new Forbidden('only the platform operator chooses a database_path')
  }
  if (input.database_path && plans[input.plan].isolation !== 'database') {
    throw invalidField('database_path', 'only the enterprise plan has a dedicated location')
  }
  const where = placementFor(
    ctx,
    row.id,
    input.plan,
    input.database_path ?? (input.plan === row.plan ? (row.databasePath ?? undefined) : undefined),
  )
  const next: TenantRow = {
    ...row,
    plan: input.plan,
    isolation: where.isolation,
    databasePath: where.databasePath,
    updatedAt: ctx.clock.now().toISOString(),
  }
  const from = placementOf(row)
  const to = placementOf(next)
  const db = tenantDb(ctx)
  const moveId = newId('req')
  db.write((orm) =>
    orm
      .insert(tenantMoves)
      .values({
        id: moveId,
        tenantId: row.id,
        fromPlacement: JSON.stringify(from),
        toPlacement: JSON.stringify(to),
        state: 'moving',
        startedAt: ctx.clock.now().toISOString(),
      })
      .run(),
  )
  let report: ReturnType<typeof moveTenantData>
  try {
    report = moveTenantData(ctx.registry, {
      tenantId: row.id,
      from,
      to,
      services: serviceNames,
      switchPlacement: () => ctx.registry.setPlacement(row.id, to),
      now: ctx.clock.now(),
    })
  } catch (err) {
    db.write((orm) =>
      orm
        .update(tenantMoves)
        .set({ state: 'failed', finishedAt: ctx.clock.now().toISOString() })
        .where(eq(tenantMoves.id, moveId))
        .run(),
    )
    ctx.log.error('tenant move failed; the old placement stays', {
      tenant_id: row.id,
      error: (err as Error).message,
    })
    throw new AppError(
      'CONFLICT',
      `the data of ${row.id} could not be moved: ${(err as Error).message}`,
    )
  }
  const saved = saveRow(ctx, next, 'updated', (d) =>
    d.orm
      .update(tenantMoves)
      .set({
        state: 'done',
        rows: JSON.stringify(report.moved),
        finishedAt: ctx.clock.now().toISOString(),
      })
      .where(eq(tenantMoves.id, moveId))
      .run(),
  )
  ctx.log.info('tenant plan changed', {
    tenant_id: row.id,
    from: row.plan,
    to: next.plan,
    moved_rows: report.total,
  })
  return { ...viewOf(saved), previous_plan: row.plan, moved_rows: report.total }
}

/**
 * Finishes moves a crash interrupted: when the placement already switched, the rows left in the
 * old databases are purged and the tenant row catches up; otherwise the old placement stands.
 */
export function resumeMoves(ctx: ServiceContext): number {
  const db = tenantDb(ctx)
  const pending = db.orm.select().from(tenantMoves).where(eq(tenantMoves.state, 'moving')).all()
  for (const m of pending) {
    const from = parseJson<Placement>(m.fromPlacement, { isolation: 'shared' })
    const to = parseJson<Placement>(m.toPlacement, { isolation: 'shared' })
    const now = ctx.registry.placement(m.tenantId)
    const switched =
      now.isolation === to.isolation && (now.database_path ?? null) === (to.database_path ?? null)
    if (switched) {
      purgeTenantRows(ctx.registry, {
        tenantId: m.tenantId,
        placement: from,
        services: serviceNames,
      })
      const row = findTenant(db, m.tenantId)
      if (row && to.plan) {
        saveRow(
          ctx,
          {
            ...row,
            plan: to.plan,
            isolation: to.isolation,
            databasePath: to.database_path ?? null,
          },
          'updated',
        )
      }
    }
    db.write((orm) =>
      orm
        .update(tenantMoves)
        .set({ state: switched ? 'done' : 'failed', finishedAt: ctx.clock.now().toISOString() })
        .where(eq(tenantMoves.id, m.id))
        .run(),
    )
    ctx.log.warn('finished an interrupted tenant move', { tenant_id: m.tenantId, switched })
  }
  return pending.length
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
    emitTenantChanged(db, ctx.clock, { ...row, status: 'deleted' }, 'deleted')
  })
  ctx.log.info('tenant erased', { tenant_id: tenantId, ...erased, users })
  return { id: tenantId, deleted: true, users_removed: users, rows_erased: erased.rows }
}
