import { isAbsolute, normalize, relative, resolve, sep } from 'node:path'
import { eq } from 'drizzle-orm'
import { topics } from '../../schema/events.ts'
import { isPlanId, type PlanId, plans } from '../../schema/plans.ts'
import { tenants } from '../../schema/tenant/tables.ts'
import type { Placement } from '../../tenants/registry.ts'
import type { Clock } from '../kernel/clock.ts'
import type { Db } from '../kernel/db.ts'
import { invalidField, TenantNotFound } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { type Role, roles } from '../kernel/roles.ts'
import { DEFAULT_TIMEZONE } from '../kernel/time-zone.ts'
import { parseLayers, resolveFeatures } from './feature-layers.ts'
import type { TenantView } from './model.ts'

export type TenantRow = typeof tenants.$inferSelect

export { DEFAULT_TIMEZONE }

const FLAG = /^[a-z][a-z0-9_]{0,63}$/

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

/**
 * What the tenant service needs of a plan: its tier (isolation, DESIGN §3), its feature defaults
 * and its user limit (null: unlimited). Built-in plans take theirs from schema/plans.ts; a custom
 * plan's are copied from billing onto the tenant row (`plan_terms`) when the tenant moves to it.
 */
export interface PlanTerms {
  tier: PlanId
  features: Record<string, boolean>
  users: number | null
}

export const builtinTerms = (id: PlanId): PlanTerms => ({
  tier: id,
  features: { ...plans[id].features },
  users: plans[id].limits.users,
})

/** The terms of the plan a row is on (a custom plan without stored terms counts as free). */
export function termsOf(row: Pick<TenantRow, 'plan' | 'planTerms'>): PlanTerms {
  if (isPlanId(row.plan)) return builtinTerms(row.plan)
  const t = parseJson<Partial<PlanTerms> | null>(row.planTerms, null)
  if (!t || !isPlanId(t.tier)) return builtinTerms('free')
  return {
    tier: t.tier,
    features: t.features && typeof t.features === 'object' ? { ...t.features } : {},
    users: typeof t.users === 'number' ? t.users : null,
  }
}

/**
 * The plan's feature defaults, the operator's overrides and the tenant's own toggles inside them
 * (services/tenant/feature-layers.ts): each flag's value and the layer that holds it.
 */
export function effectiveFeatures(row: Pick<TenantRow, 'plan' | 'planTerms' | 'featureOverrides'>) {
  const defaults: Record<string, boolean> = { ...termsOf(row).features }
  const layers = parseLayers(row.featureOverrides)
  const resolved = resolveFeatures(defaults, layers)
  return {
    defaults,
    overrides: { ...layers.operator, ...layers.tenant },
    operator_overrides: layers.operator,
    tenant_overrides: layers.tenant,
    ...resolved,
    layers,
  }
}

/** The instance the tenant was moved to, per partitioned service (`mmp tenant move --to`). */
export const instancesOf = (row: Pick<TenantRow, 'instances'>): Record<string, string> =>
  parseJson<Record<string, string>>(row.instances, {})

/** Where the data of a tenant row lives, with the profile every service reads. */
export function placementOf(row: TenantRow): Placement {
  const p: Placement = {
    isolation: row.isolation as Placement['isolation'],
    plan: row.plan,
    status: row.status,
    features: effectiveFeatures(row).features,
    timezone: row.timezone,
    as_of: row.updatedAt,
  }
  const instances = instancesOf(row)
  if (Object.keys(instances).length > 0) p.instances = instances
  if (row.isolation === 'database' && row.databasePath) p.database_path = row.databasePath
  return p
}

/** What the tenant's record and its `tenants.changed` event both tell of it. */
function profileOf(row: TenantRow) {
  return {
    name: row.name,
    plan: row.plan,
    isolation: row.isolation,
    status: row.status,
    features: effectiveFeatures(row).features,
    timezone: row.timezone,
    instances: instancesOf(row),
  }
}

export function viewOf(row: TenantRow): TenantView {
  return {
    id: row.id,
    ...profileOf(row),
    settings: parseJson<Record<string, unknown>>(row.settings, {}),
    database_path: row.databasePath,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  }
}

export function findTenant(db: Db, id: string): TenantRow | undefined {
  return db.orm.select().from(tenants).where(eq(tenants.id, id)).get()
}

export function getTenantRow(db: Db, id: string): TenantRow {
  const row = findTenant(db, id)
  if (!row) throw new TenantNotFound(id)
  return row
}

/** Emits `mobilemoney.tenants.changed` for a row; call inside the write that changed it. */
export function emitTenantChanged(
  db: Db,
  clock: Clock,
  row: TenantRow,
  change: 'created' | 'updated' | 'suspended' | 'deleted',
): void {
  emitEvent(
    db,
    {
      topic: topics.tenantsChanged,
      tenantId: row.id,
      data: { change, ...profileOf(row) },
    },
    clock,
  )
}

/** A built-in plan id from `free|pro|enterprise` in any case, or null. */
export function builtinPlan(value: string): PlanId | null {
  const id = value.trim().toLowerCase()
  return isPlanId(id) ? id : null
}

/** A plan a tenant moves to: its id, and for a custom plan the terms stored on the row. */
export type PlanChoice = Pick<TenantRow, 'plan' | 'planTerms'>

/** A role name in any case, in its canonical spelling, or a 422. */
export function roleFrom(value: string, field = 'role'): Role {
  const found = roles.find((r) => r.toLowerCase() === value.trim().toLowerCase())
  if (!found) throw invalidField(field, `must be one of ${roles.join(', ')}`)
  return found
}

/** An IANA time zone Intl knows, or a 422. */
export function assertTimezone(value: string, field = 'timezone'): string {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone
  } catch {
    throw invalidField(field, `'${value}' is not an IANA time zone`)
  }
}

/** A feature flag name and a boolean (or null to return to the plan default). */
export function assertFlags(input: Record<string, unknown>): Record<string, boolean | null> {
  const out: Record<string, boolean | null> = {}
  const entries = Object.entries(input)
  if (entries.length === 0) throw invalidField('features', 'name at least one feature')
  if (entries.length > 64) throw invalidField('features', 'at most 64 features')
  for (const [k, v] of entries) {
    if (!FLAG.test(k)) throw invalidField(`features.${k}`, 'must match ^[a-z][a-z0-9_]{0,63}$')
    if (typeof v !== 'boolean' && v !== null) {
      throw invalidField(`features.${k}`, 'must be true, false or null (the plan default)')
    }
    out[k] = v
  }
  return out
}

/** Free-form settings: merged key by key, a null value removes the key. */
export function mergeSettings(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const next = { ...current }
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k]
    else next[k] = v
  }
  if (Object.keys(next).length > 100) throw invalidField('settings', 'at most 100 keys')
  if (JSON.stringify(next).length > 16_384) throw invalidField('settings', 'at most 16 KiB')
  return next
}

/**
 * An Enterprise database location: absolute (another volume) or relative to the data dir, never
 * with `..` and never inside the platform, shared or another tenant's folder.
 */
export function assertDatabasePath(dataDir: string, value: string, tenantId: string): string {
  const bad = (message: string) => invalidField('database_path', message)
  if (value.includes('\0')) throw bad('must not contain NUL')
  if (value.split(/[\\/]+/).includes('..')) throw bad("must not contain '..'")
  const clean = normalize(value).replace(/[\\/]+$/, '')
  if (isAbsolute(clean)) {
    const rel = relative(resolve(dataDir), clean)
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
      return assertInsideDataDir(rel, tenantId, bad)
    }
    return clean
  }
  return assertInsideDataDir(clean, tenantId, bad)
}

function assertInsideDataDir(rel: string, tenantId: string, bad: (m: string) => Error): string {
  const parts = rel.split(sep).filter((p) => p && p !== '.')
  if (parts.length === 0) throw bad('must name a folder, not the data dir itself')
  if (parts[0] === 'platform') throw bad("must not be inside 'platform'")
  if (parts[0] === 'tenants' && parts.length >= 2 && parts[1] !== tenantId) {
    throw bad("must not be inside another tenant's folder")
  }
  if (parts[0] === 'tenants' && parts.length === 1) throw bad("must not be 'tenants' itself")
  return parts.join('/')
}
