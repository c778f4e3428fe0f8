import type { PlanTerms } from '../../schema/events.ts'
import { plans as builtinPlans, isPlanId } from '../../schema/plans.ts'
import { AppError, invalidField } from '../kernel/errors.ts'
import type { CallOptions } from '../kernel/http-client.ts'

export interface FakeUser {
  id: string
  tenant_id: string
  email: string
  role: string
  status: string
}

export interface FakePlan {
  id: string
  tier: string
  price: number
  limits: { users: number | null }
  features: Record<string, boolean>
}

/** A plan change billing made, as its upgrade door answers it and its event reports it. */
export interface FakePlanChange {
  tenant_id: string
  plan: string
  plan_terms: PlanTerms | null
  plan_revision: number
}

/**
 * Stands in for auth and billing: records every call and answers like they do. The same calls are
 * made to the fake and to the real routes in test/tenant-peers.contract.test.ts, so an answer
 * here that no longer matches the real one fails that test.
 */
export function fakeClient() {
  const users: FakeUser[] = []
  /** The plans billing lists besides the built-in ones (which the tenant service never asks for). */
  const plans: FakePlan[] = []
  const calls: Array<{ service: string; path: string; opts: CallOptions }> = []
  /** Billing's subscriptions: the plan and its revision per tenant (free, revision 1, at first). */
  const subscriptions = new Map<string, { plan: string; revision: number }>()
  /** Every plan change billing's door made, in order: what `subscriptions.changed` would carry. */
  const changes: FakePlanChange[] = []
  const termsOf = (id: string): PlanTerms | null => {
    if (isPlanId(id)) {
      const p = builtinPlans[id]
      return { tier: id, features: { ...p.features }, users: p.limits.users }
    }
    const p = plans.find((x) => x.id === id)
    return p
      ? { tier: p.tier as PlanTerms['tier'], features: p.features, users: p.limits.users }
      : null
  }
  let n = 0
  return {
    users,
    plans,
    calls,
    subscriptions,
    changes,
    async call<T>(service: string, path: string, opts: CallOptions = {}): Promise<T> {
      calls.push({ service, path, opts })
      // As the real client (services/kernel/http-client.ts): a call past its deadline is not made.
      if (opts.deadline !== undefined && opts.deadline <= Date.now())
        throw new AppError('TIMEOUT', `the deadline passed before calling ${service}`)
      const method = opts.method ?? 'GET'
      if (service === 'billing' && path === '/api/v1/billing/plans') {
        return { data: plans } as T
      }
      if (method === 'POST' && path === '/api/v1/billing/subscriptions/upgrade') {
        const b = opts.body as { tenant_id: string; plan: string }
        const terms = termsOf(b.plan)
        if (!terms) throw invalidField('plan', `unknown plan '${b.plan}'`)
        const sub = subscriptions.get(b.tenant_id) ?? { plan: 'free', revision: 1 }
        const next = sub.plan === b.plan ? sub : { plan: b.plan, revision: sub.revision + 1 }
        subscriptions.set(b.tenant_id, next)
        const change = {
          tenant_id: b.tenant_id,
          plan: next.plan,
          plan_terms: terms,
          plan_revision: next.revision,
        }
        if (next !== sub) changes.push(change)
        return {
          id: `sub_${b.tenant_id}`,
          status: 'active',
          current_period_start: '2026-11-01T00:00:00.000Z',
          current_period_end: '2026-12-01T00:00:00.000Z',
          grace_period_ends: null,
          cancel_at_period_end: false,
          credit: 0,
          created_at: '2026-11-01T00:00:00.000Z',
          updated_at: '2026-11-01T00:00:00.000Z',
          ...change,
        } as T
      }
      if (service === 'billing') {
        return {
          tenant_id: path.split('/').at(-1),
          plan: 'free',
          status: 'active',
          period_start: '2026-11-01T00:00:00.000Z',
          period_end: '2026-12-01T00:00:00.000Z',
          metrics: { transactions: { used: 12, limit: 1000 } },
        } as T
      }
      if (method === 'POST' && path === '/api/v1/auth/users') {
        const b = opts.body as { tenant_id: string; email: string; role: string; password?: string }
        if (users.some((u) => u.email === b.email))
          throw new AppError('CONFLICT', 'email already exists')
        const u = {
          id: `usr_${++n}`,
          tenant_id: b.tenant_id,
          email: b.email,
          role: b.role,
          status: b.password ? 'active' : 'invited',
        }
        users.push(u)
        return (
          b.password
            ? u
            : { ...u, invite_token: `inv-${n}`, expires_at: '2026-12-01T00:00:00.000Z' }
        ) as T
      }
      if (method === 'GET' && path === '/api/v1/auth/users') {
        return { data: users.filter((u) => u.tenant_id === opts.query?.tenant_id) } as T
      }
      const one = /^\/api\/v1\/auth\/users\/(.+)$/.exec(path)
      if (method === 'DELETE' && one) {
        users.splice(
          users.findIndex((u) => u.id === one[1]),
          1,
        )
        return null as T
      }
      const all = /^\/api\/v1\/auth\/tenants\/(.+)\/users$/.exec(path)
      if (method === 'DELETE' && all) {
        const before = users.length
        for (let i = users.length - 1; i >= 0; i--)
          if (users[i]!.tenant_id === all[1]) users.splice(i, 1)
        return { removed: before - users.length } as T
      }
      throw new Error(`unexpected call ${service} ${method} ${path}`)
    },
  }
}
