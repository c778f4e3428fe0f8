import { eq } from 'drizzle-orm'
import type { Plan } from '../../schema/peers.ts'
import { isPlanId, type PlanId, plans } from '../../schema/plans.ts'
import { tenantMoves, tenants } from '../../schema/tenant/tables.ts'
import { type MoveReport, moveTenantData, purgeTenantRowsInSlices } from '../../tenants/move.ts'
import { type Placement, placementFolder } from '../../tenants/registry.ts'
import { type ServiceContext, serviceNames } from '../kernel/context.ts'
import { AppError, Conflict, invalidField } from '../kernel/errors.ts'
import { faultPoint } from '../kernel/faults.ts'
import { newId } from '../kernel/ids.ts'
import {
  assertDatabasePath,
  builtinPlan,
  type PlanChoice,
  type PlanTerms,
  placementOf,
  type TenantRow,
  termsOf,
  viewOf,
} from './profile.ts'
import { saveRow, tenantDb } from './store.ts'
import type { CallInfo } from './users.ts'

/** A plan as billing answers it (schema/peers.ts). */
type BillingPlan = Plan

/**
 * The plan a tenant is to move to: a built-in id (any case) as it is, otherwise a plan billing
 * defines (`GET /billing/plans`, asked with the caller's token), whose tier, features and user
 * limit are kept on the tenant row. A plan nobody knows is a 422.
 */
export async function resolvePlan(
  ctx: ServiceContext,
  call: CallInfo,
  value: string,
): Promise<PlanChoice> {
  const builtin = builtinPlan(value)
  if (builtin) return { plan: builtin, planTerms: null }
  const id = value.trim().toLowerCase()
  const res = await ctx.client.call<{ data: BillingPlan[] }>('billing', '/api/v1/billing/plans', {
    token: call.token,
    requestId: call.requestId,
    deadline: call.deadline,
  })
  const found = id ? res?.data?.find((p) => p.id === id) : undefined
  if (!found) {
    throw invalidField(
      'plan',
      `unknown plan '${value}': not free, pro, enterprise or a billing plan`,
    )
  }
  const tier = isPlanId(found.tier) ? found.tier : (found.price ?? 0) > 0 ? 'pro' : 'free'
  const features = Object.fromEntries(
    Object.entries(found.features ?? {}).filter(([, v]) => typeof v === 'boolean'),
  ) as Record<string, boolean>
  const users = found.limits?.users
  const terms: PlanTerms = { tier, features, users: typeof users === 'number' ? users : null }
  return { plan: found.id, planTerms: JSON.stringify(terms) }
}

/** The isolation a tier puts a tenant in, and for Enterprise its checked database folder. */
export function placementFor(
  ctx: ServiceContext,
  tenantId: string,
  tier: PlanId,
  databasePath: string | undefined,
): { isolation: Placement['isolation']; databasePath: string | null } {
  const isolation = plans[tier].isolation
  if (databasePath && isolation !== 'database') {
    throw invalidField('database_path', 'only the enterprise tier has a dedicated location')
  }
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

/**
 * Where a plan change puts a tenant: the isolation of the plan's tier, and on the enterprise tier
 * the `database_path` asked for or the one it has. Throws (422, 409) before anything changes.
 */
export function placementForChange(
  ctx: ServiceContext,
  row: TenantRow,
  choice: PlanChoice,
  databasePath: string | undefined,
) {
  const tier = termsOf(choice).tier
  const keepPath =
    plans[tier].isolation === 'database' && row.isolation === 'database'
      ? (row.databasePath ?? undefined)
      : undefined
  return placementFor(ctx, row.id, tier, databasePath ?? keepPath)
}

/**
 * Changes a tenant's plan and, with it, its isolation tier and feature defaults; the tenant's rows
 * move to the new tier's databases before the placement switches (tenants/move.ts). Billing owns
 * the plan: this applies a plan billing reported (its door's answer or `subscriptions.changed`),
 * and `revision` is billing's plan revision of it. Other tenants are served while the rows move.
 */
export async function applyPlan({
  ctx,
  row,
  choice,
  databasePath,
  revision = row.planRevision,
}: {
  ctx: ServiceContext
  row: TenantRow
  choice: PlanChoice
  databasePath?: string | undefined
  revision?: number
}) {
  const where = placementForChange(ctx, row, choice, databasePath)
  const next: TenantRow = {
    ...row,
    plan: choice.plan,
    planTerms: choice.planTerms,
    planRevision: Math.max(row.planRevision, revision),
    isolation: where.isolation,
    databasePath: where.databasePath,
  }
  const from = placementOf(row)
  const to = placementOf(next)
  const db = tenantDb(ctx)
  const moveId = newId('req')
  const at = () => ctx.clock.now().toISOString()
  db.write((orm) =>
    orm
      .insert(tenantMoves)
      .values({
        id: moveId,
        tenantId: row.id,
        fromPlacement: JSON.stringify(from),
        // The custom plan's terms and billing's revision ride along, so a move finished after a
        // crash keeps them.
        toPlacement: JSON.stringify({
          ...to,
          plan_terms: next.planTerms,
          plan_revision: next.planRevision,
        }),
        state: 'moving',
        startedAt: at(),
      })
      .run(),
  )
  let switched = false
  let report: MoveReport = { moved: {}, total: 0 }
  try {
    report = await moveTenantData(ctx.registry, {
      tenantId: row.id,
      from,
      to,
      services: serviceNames,
      switchPlacement: () => {
        ctx.registry.setPlacement(row.id, to)
        switched = true
      },
      afterCopy: () => faultPoint('tenant.move.after_copy'),
      now: ctx.clock.now(),
    })
  } catch (err) {
    const error = (err as Error).message
    if (switched) {
      // The new placement already holds every row; only the old copies could not be deleted.
      ctx.log.warn('tenant moved; stale rows left in the old databases are purged again', {
        tenant_id: row.id,
        error,
      })
      await purgeTenantRowsInSlices(ctx.registry, {
        tenantId: row.id,
        placement: from,
        services: serviceNames,
      })
    } else {
      ctx.log.error('tenant move failed; the old placement stays', { tenant_id: row.id, error })
      if (!sameFolder(ctx, from, to, row.id)) {
        await purgeTenantRowsInSlices(ctx.registry, {
          tenantId: row.id,
          placement: to,
          services: serviceNames,
        })
      }
      db.write((orm) =>
        orm
          .update(tenantMoves)
          .set({ state: 'failed', finishedAt: at() })
          .where(eq(tenantMoves.id, moveId))
          .run(),
      )
      throw new AppError('CONFLICT', `the data of ${row.id} could not be moved: ${error}`)
    }
  }
  const saved = saveRow(ctx, next, 'updated', (d) =>
    d.orm
      .update(tenantMoves)
      .set({ state: 'done', rows: JSON.stringify(report.moved), finishedAt: at() })
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

/** Whether two placements keep a tenant's files in the same folder (then nothing moves). */
export function sameFolder(
  ctx: ServiceContext,
  a: Placement,
  b: Placement,
  tenantId: string,
): boolean {
  const dir = ctx.registry.dataDir
  return placementFolder(dir, a, tenantId) === placementFolder(dir, b, tenantId)
}
