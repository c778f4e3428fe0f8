import { eq } from 'drizzle-orm'
import { tenants } from '../../schema/tenant/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { Forbidden } from '../kernel/errors.ts'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'
import { assertTenantId } from '../kernel/tenant-id.ts'
import { emitTenantChanged, getTenantRow, placementOf, type TenantRow } from './profile.ts'

export const tenantDb = (ctx: ServiceContext) => ctx.registry.platform('tenant')

/** The tenant named in a path: well-formed (422), the actor's own (403), existing (404). */
export function tenantInPath(ctx: ServiceContext, actor: Actor, id: string): TenantRow {
  const tenantId = tenantFor(actor, assertTenantId(id, 'tenant_id'))
  return getTenantRow(tenantDb(ctx), tenantId)
}

/** Changes by a tenant's own users are refused while the operator has it suspended. */
export function assertWritable(actor: Actor, row: TenantRow): void {
  if (row.status === 'suspended' && !isOperator(actor)) {
    throw new Forbidden(`tenant ${row.id} is suspended; only reads are allowed`)
  }
}

/** Writes a changed row, its placement profile and a `tenants.changed` event. */
export function saveRow(
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
