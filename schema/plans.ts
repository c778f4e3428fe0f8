/**
 * The three tiers (DESIGN §10–11): billing seeds its plans from these, and the tenant service takes
 * its feature defaults from them. Prices in KES minor units (cents) per month; a limit of null is
 * unlimited.
 */
export const planIds = ['free', 'pro', 'enterprise'] as const
export type PlanId = (typeof planIds)[number]

export const featureNames = ['advanced_analytics', 'bulk_upload', 'api_access'] as const
export type FeatureName = (typeof featureNames)[number]

export interface PlanDefinition {
  id: PlanId
  name: string
  priceCents: number
  currency: 'KES'
  limits: {
    transactions: number | null
    statements: number | null
    users: number | null
    webhook_endpoints: number | null
  }
  features: Record<FeatureName, boolean>
  /** Where the tenant's data lives on this tier (DESIGN §3). */
  isolation: 'shared' | 'schema' | 'database'
}

export const plans: Record<PlanId, PlanDefinition> = {
  free: {
    id: 'free',
    name: 'Free',
    priceCents: 0,
    currency: 'KES',
    limits: { transactions: 10_000, statements: 20, users: 5, webhook_endpoints: 3 },
    features: { advanced_analytics: false, bulk_upload: true, api_access: true },
    isolation: 'shared',
  },
  pro: {
    id: 'pro',
    name: 'Pro',
    priceCents: 2_500_00,
    currency: 'KES',
    limits: { transactions: 50_000, statements: 100, users: 20, webhook_endpoints: 10 },
    features: { advanced_analytics: true, bulk_upload: true, api_access: true },
    isolation: 'schema',
  },
  enterprise: {
    id: 'enterprise',
    name: 'Enterprise',
    priceCents: 15_000_00,
    currency: 'KES',
    limits: { transactions: null, statements: null, users: null, webhook_endpoints: null },
    features: { advanced_analytics: true, bulk_upload: true, api_access: true },
    isolation: 'database',
  },
}

export const isPlanId = (x: unknown): x is PlanId =>
  typeof x === 'string' && (planIds as readonly string[]).includes(x)

/**
 * The tier a tenant's profile puts it in, for rates and limits: a built-in plan is its own tier; a
 * custom plan's tier shows in its isolation (shared free, own folder pro, own database enterprise).
 */
export function tierOfProfile(profile: {
  plan?: string | undefined
  isolation: 'shared' | 'schema' | 'database'
}): PlanId {
  if (isPlanId(profile.plan)) return profile.plan
  return ({ shared: 'free', schema: 'pro', database: 'enterprise' } as const)[profile.isolation]
}
