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

const PUBLIC_POSTS = new Set([
  '/api/v1/auth/login',
  '/api/v1/auth/refresh',
  '/api/v1/auth/logout',
  '/api/v1/auth/accept-invite',
])

/** Routes that carry no JWT: login and token endpoints, the provider callback. */
export function isPublicRoute(method: string, path: string): boolean {
  if (path === '/api/v1/payments/callback' || path.startsWith('/api/v1/payments/callback/'))
    return true
  if (method === 'GET' && path === '/api/v1/auth/.well-known/jwks.json') return true
  return method === 'POST' && PUBLIC_POSTS.has(path)
}

/** The first path segment after /api/v1/, or undefined. */
export function segmentOf(path: string): string | undefined {
  if (!path.startsWith('/api/v1/')) return undefined
  const end = path.indexOf('/', 8)
  return path.slice(8, end < 0 ? undefined : end)
}

export function serviceFor(path: string): ServiceName | undefined {
  const segment = segmentOf(path)
  return segment ? routeTable[segment] : undefined
}

/** Statement uploads take larger bodies (DESIGN §6: 20 MiB); parser JSON batches are 1 MiB like the rest. */
export function isUploadRoute(path: string): boolean {
  return segmentOf(path) === 'statements'
}

/**
 * The tenant a path names, where the path is about one tenant: /tenants/{id},
 * /billing/subscriptions/{id}, /billing/usage/{id}, /cashflow/summary/{id},
 * /auth/tenants/{id}. Fixed words in those positions (upgrade, record) are not tenants.
 */
export function tenantInPath(path: string): string | undefined {
  const parts = path.split('/', 7)
  // ['', 'api', 'v1', segment, a, b, ...]
  const [, , , segment, a, b] = parts
  switch (segment) {
    case 'tenants':
      return a || undefined
    case 'billing':
      if (a === 'subscriptions' && b && b !== 'upgrade') return b
      if (a === 'usage' && b && b !== 'record') return b
      return undefined
    case 'cashflow':
      return a === 'summary' && b ? b : undefined
    case 'auth':
      return a === 'tenants' && b ? b : undefined
    default:
      return undefined
  }
}

const WORD = /^[a-z][a-z_.-]{0,31}$/
const ID_LIKE = /\d|_/
const labels = new Map<string, string>()

/**
 * A bounded metrics label for a path: `/api/v1/{segment}` plus the next segment when it is a fixed
 * word (summary, plans, status) and `:id` otherwise, so tenant and resource ids never become
 * label values.
 */
export function routeLabel(path: string): string {
  const hit = labels.get(path)
  if (hit) return hit
  const [, , , segment = '', next] = path.split('/', 5)
  let label: string
  if (!routeTable[segment]) label = 'unknown'
  else if (!next) label = `/api/v1/${segment}`
  else if (segment !== 'tenants' && WORD.test(next) && !ID_LIKE.test(next))
    label = `/api/v1/${segment}/${next}`
  else label = `/api/v1/${segment}/:id`
  if (labels.size < 10_000) labels.set(path, label)
  return label
}

/** The payment provider's callbacks (STK and B2C results). */
export function isProviderCallback(path: string): boolean {
  return path === '/api/v1/payments/callback' || path.startsWith('/api/v1/payments/callback/')
}

/**
 * Route classes with a longer budget (DESIGN §5): statement uploads and exports move a whole
 * history in one request.
 */
export function isBulkRoute(path: string): boolean {
  return path.startsWith('/api/v1/statements') || path.startsWith('/api/v1/analytics/export')
}
