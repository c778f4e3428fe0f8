import type { ServiceName } from '../kernel/context.ts'

/** `/api/v1/{segment}/...` → the service that owns it (DESIGN §5). */
export const routeTable: Record<string, ServiceName> = {
  auth: 'auth',
  analytics: 'analytics',
  tenants: 'tenant',
  cashflow: 'cashflow',
  payments: 'payment',
  billing: 'billing',
  categorize: 'categorizer',
  webhooks: 'webhook',
  statements: 'parser',
  parser: 'parser',
}

/** Routes that carry no JWT: login and token endpoints, the provider callback. */
export function isPublicRoute(method: string, path: string): boolean {
  if (path === '/api/v1/payments/callback' || path.startsWith('/api/v1/payments/callback/'))
    return true
  if (method === 'GET' && path === '/api/v1/auth/.well-known/jwks.json') return true
  return (
    method === 'POST' &&
    [
      '/api/v1/auth/login',
      '/api/v1/auth/refresh',
      '/api/v1/auth/logout',
      '/api/v1/auth/accept-invite',
    ].includes(path)
  )
}

export function serviceFor(path: string): ServiceName | undefined {
  const m = /^\/api\/v1\/([a-z]+)(?:\/|$)/.exec(path)
  return m ? routeTable[m[1]!] : undefined
}
