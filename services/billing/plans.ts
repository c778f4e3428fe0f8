import { asc, eq } from 'drizzle-orm'
import { plans } from '../../schema/billing/tables.ts'
import { isPlanId, type PlanId, planIds, plans as tierPlans } from '../../schema/plans.ts'
import type { Db } from '../kernel/db.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor, toMinor } from '../kernel/money.ts'
import type { CreatePlanBody, Plan } from './model.ts'

/** Overage prices of the seeded tiers (cents per unit past the limit). */
const tierOverage: Record<string, Record<string, number>> = {
  free: { transactions: 100, statements: 5000 },
  pro: { transactions: 50, statements: 2500 },
  enterprise: {},
}

/** A plan row with its JSON columns read and its tier resolved (`tierOf`). */
export type PlanRow = Pick<typeof plans.$inferSelect, 'id' | 'name' | 'priceCents' | 'currency'> & {
  tier: PlanId
  limits: Plan['limits']
  features: Plan['features']
  overage: Record<string, number>
}

/** Inserts the three tiers from schema/plans.ts when missing; edits made later are kept. */
export function seedPlans(db: Db, now: Date): void {
  db.write((orm) => {
    for (const id of planIds) {
      const p = tierPlans[id]
      orm
        .insert(plans)
        .values({
          id,
          name: p.name,
          tier: id,
          priceCents: p.priceCents,
          currency: p.currency,
          interval: 'month',
          limits: JSON.stringify(p.limits),
          features: JSON.stringify(p.features),
          overage: JSON.stringify(tierOverage[id] ?? {}),
          createdAt: now.toISOString(),
        })
        .onConflictDoNothing()
        .run()
    }
  })
}

/** A custom plan's tier when none is named: pro when it costs anything, else free. */
export const defaultTier = (priceCents: number): PlanId => (priceCents > 0 ? 'pro' : 'free')

const tierOf = (r: typeof plans.$inferSelect): PlanId =>
  isPlanId(r.tier) ? r.tier : isPlanId(r.id) ? r.id : defaultTier(r.priceCents)

const rowOf = (r: typeof plans.$inferSelect): PlanRow => ({
  id: r.id,
  name: r.name,
  tier: tierOf(r),
  priceCents: r.priceCents,
  currency: r.currency,
  limits: JSON.parse(r.limits),
  features: JSON.parse(r.features),
  overage: JSON.parse(r.overage),
})

export function toPlan(p: PlanRow): Plan {
  return {
    id: p.id,
    name: p.name,
    tier: p.tier,
    price: toMajor(p.priceCents),
    currency: p.currency,
    interval: 'month',
    limits: p.limits,
    features: p.features,
    overage: Object.fromEntries(Object.entries(p.overage).map(([k, v]) => [k, toMajor(v)])),
  }
}

export function listPlans(db: Db): PlanRow[] {
  return db.orm.select().from(plans).orderBy(asc(plans.priceCents), asc(plans.id)).all().map(rowOf)
}

export function findPlan(db: Db, id: string): PlanRow | null {
  const r = db.orm.select().from(plans).where(eq(plans.id, id)).get()
  return r ? rowOf(r) : null
}

export function getPlan(db: Db, id: string): PlanRow {
  const p = findPlan(db, id)
  if (!p) throw new NotFound('plan', id)
  return p
}

/**
 * A plan the operator defines; ids are unique. Its tier (isolation) is named or follows the price;
 * its limits and features are its own.
 */
export function createPlan(db: Db, body: CreatePlanBody, now: Date): PlanRow {
  const id = body.id ?? newId('pln')
  const priceCents = toMinor(body.price, 'price')
  const row = {
    id,
    name: body.name,
    tier: body.tier ?? defaultTier(priceCents),
    priceCents,
    currency: body.currency ?? 'KES',
    interval: 'month',
    limits: JSON.stringify(body.limits),
    features: JSON.stringify({
      advanced_analytics: body.features?.advanced_analytics ?? false,
      bulk_upload: body.features?.bulk_upload ?? false,
      api_access: body.features?.api_access ?? false,
    }),
    overage: JSON.stringify(
      Object.fromEntries(
        Object.entries(body.overage ?? {}).map(([k, v]) => [k, toMinor(v, `overage.${k}`)]),
      ),
    ),
    createdAt: now.toISOString(),
  }
  db.write((orm) => {
    if (orm.select({ id: plans.id }).from(plans).where(eq(plans.id, id)).get())
      throw new Conflict(`a plan with id '${id}' exists`)
    orm.insert(plans).values(row).run()
  })
  return getPlan(db, id)
}
