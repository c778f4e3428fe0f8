import { AppError } from '../kernel/errors.ts'
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
  let n = 0
  return {
    users,
    plans,
    calls,
    async call<T>(service: string, path: string, opts: CallOptions = {}): Promise<T> {
      calls.push({ service, path, opts })
      const method = opts.method ?? 'GET'
      if (service === 'billing' && path === '/api/v1/billing/plans') {
        return { data: plans } as T
      }
      if (service === 'billing') {
        return {
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
