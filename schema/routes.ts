/**
 * The route manifest: every route of the API with the facts more than one part acts on, read by
 * the gateway (routing, public routes, body limits, budgets, the tenant a path names), by every
 * service's body limit (kernel) and by the daemon's server caps. Adding a route means adding a
 * line here; test/route-manifest.test.ts fails on a documented route that has none.
 *
 * A path pattern is split on `/`: a `:name` segment matches any one non-empty segment, every
 * other segment only itself. `:tenant_id` is where a path names a tenant (DESIGN §5).
 */

/** The services that own routes (the kernel's `serviceNames`; schema/ imports nothing else). */
export type Owner =
  | 'analytics'
  | 'auth'
  | 'tenant'
  | 'parser'
  | 'cashflow'
  | 'payment'
  | 'billing'
  | 'categorizer'
  | 'webhook'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** Body limit classes in bytes (DESIGN §6): statement uploads 20 MiB, everything else 1 MiB. */
export const BODY_LIMITS = { default: 1024 * 1024, upload: 20 * 1024 * 1024 } as const
export type BodyClass = keyof typeof BODY_LIMITS
/** The byte size of each class, where the gateway's configuration overrides the defaults. */
export type BodySizes = Record<BodyClass, number>

/** `bulk`: a whole history moves in one request (DESIGN §5), so the longer gateway budget. */
export type BudgetClass = 'default' | 'bulk'

/**
 * Who may call without a JWT: `token` needs one; `public` routes are open and limited per client
 * IP; `provider` routes are the payment provider's callbacks, authenticated by the per-request
 * token in their URL and not held to the per-IP limit.
 */
export type Access = 'token' | 'public' | 'provider'

/** `/api/v1/{segment}/...` → the service that owns it (DESIGN §5). */
export const segmentOwners: Readonly<Record<string, Owner>> = {
  auth: 'auth',
  analytics: 'analytics',
  backups: 'tenant',
  tenants: 'tenant',
  cashflow: 'cashflow',
  payments: 'payment',
  billing: 'billing',
  categorize: 'categorizer',
  webhooks: 'webhook',
  statements: 'parser',
  parser: 'parser',
}

/**
 * `create`: the route creates or moves something, so it honours `Idempotency-Key` (the kernel's
 * `idempotent: true`, or the payment service's own keys); test/idempotency.test.ts sends each twice.
 * `shownOnce`: top-level fields of a create's answer that are secrets shown once (a key, a signing
 * secret, an invitation token or a link carrying it): the idempotency store never keeps them, and a
 * replay says they were shown once (test/secrets-at-rest.test.ts greps the data dir for them).
 */
type Facts = {
  access?: Access
  body?: BodyClass
  budget?: BudgetClass
  create?: true
  shownOnce?: readonly string[]
}

const INVITATION = ['invite_token', 'invite_url'] as const

const declared: Array<[Method, string, Facts?]> = [
  ['GET', '/api/v1/analytics/counterparties'],
  ['GET', '/api/v1/analytics/customers'],
  ['GET', '/api/v1/analytics/export', { budget: 'bulk' }],
  ['GET', '/api/v1/analytics/insights'],
  ['GET', '/api/v1/analytics/period'],
  ['GET', '/api/v1/analytics/reconciliation'],
  ['GET', '/api/v1/analytics/reports/:report'],
  ['GET', '/api/v1/analytics/segments'],
  ['GET', '/api/v1/analytics/summary'],
  ['GET', '/api/v1/analytics/transactions'],
  ['GET', '/api/v1/analytics/transactions/:id'],
  ['GET', '/api/v1/analytics/trends'],

  ['GET', '/api/v1/auth/.well-known/jwks.json', { access: 'public' }],
  ['POST', '/api/v1/auth/accept-invite', { access: 'public' }],
  ['GET', '/api/v1/auth/api-keys'],
  ['POST', '/api/v1/auth/api-keys', { create: true, shownOnce: ['key'] }],
  ['GET', '/api/v1/auth/api-keys/current'],
  ['DELETE', '/api/v1/auth/api-keys/:id'],
  ['POST', '/api/v1/auth/login', { access: 'public' }],
  ['POST', '/api/v1/auth/logout', { access: 'public' }],
  ['POST', '/api/v1/auth/refresh', { access: 'public' }],
  ['GET', '/api/v1/auth/me'],
  ['GET', '/api/v1/auth/revocations'],
  ['DELETE', '/api/v1/auth/tenants/:tenant_id/users'],
  ['GET', '/api/v1/auth/users'],
  ['POST', '/api/v1/auth/users', { create: true, shownOnce: INVITATION }],
  ['GET', '/api/v1/auth/users/count'],
  ['DELETE', '/api/v1/auth/users/:id'],
  ['PATCH', '/api/v1/auth/users/:id'],

  ['GET', '/api/v1/billing/invoices'],
  ['GET', '/api/v1/billing/invoices/:invoice_id'],
  ['POST', '/api/v1/billing/invoices/:invoice_id/pay', { create: true }],
  ['GET', '/api/v1/billing/invoices/:invoice_id/pdf'],
  ['POST', '/api/v1/billing/invoices/:invoice_id/void'],
  ['GET', '/api/v1/billing/plans'],
  ['POST', '/api/v1/billing/plans', { create: true }],
  ['POST', '/api/v1/billing/run-cycle'],
  ['GET', '/api/v1/billing/subscriptions/:tenant_id'],
  ['GET', '/api/v1/billing/subscriptions/:tenant_id/events'],
  ['POST', '/api/v1/billing/subscriptions/upgrade', { create: true }],
  ['GET', '/api/v1/billing/usage/:tenant_id'],
  ['POST', '/api/v1/billing/usage/record', { create: true }],

  ['POST', '/api/v1/cashflow/analyze'],
  ['GET', '/api/v1/cashflow/daily'],
  ['GET', '/api/v1/cashflow/forecast'],
  ['GET', '/api/v1/cashflow/settings'],
  ['PUT', '/api/v1/cashflow/settings'],
  ['GET', '/api/v1/cashflow/summary/:tenant_id'],

  ['POST', '/api/v1/categorize'],
  ['GET', '/api/v1/categorize/rules'],
  ['POST', '/api/v1/categorize/rules', { create: true }],
  ['GET', '/api/v1/categorize/rules/:id'],
  ['PUT', '/api/v1/categorize/rules/:id'],
  ['PATCH', '/api/v1/categorize/rules/:id'],
  ['DELETE', '/api/v1/categorize/rules/:id'],
  ['POST', '/api/v1/categorize/single'],
  ['PUT', '/api/v1/categorize/transactions/:id'],

  ['POST', '/api/v1/parser/sms', { create: true }],
  ['POST', '/api/v1/parser/transactions', { create: true }],
  ['GET', '/api/v1/statements'],
  ['POST', '/api/v1/statements', { body: 'upload', budget: 'bulk', create: true }],

  ['GET', '/api/v1/payments'],
  ['GET', '/api/v1/payments/:id'],
  ['POST', '/api/v1/payments/account-balance'],
  ['GET', '/api/v1/payments/account-balance/:id'],
  ['POST', '/api/v1/payments/b2c', { create: true }],
  ['GET', '/api/v1/payments/b2c/:id'],
  ['POST', '/api/v1/payments/callback', { access: 'provider' }],
  ['POST', '/api/v1/payments/callback/b2c', { access: 'provider' }],
  ['POST', '/api/v1/payments/callback/result', { access: 'provider' }],
  ['GET', '/api/v1/payments/alerts'],
  ['POST', '/api/v1/payments/daraja/check'],
  ['GET', '/api/v1/payments/c2b/account'],
  ['POST', '/api/v1/payments/c2b/confirmation', { access: 'provider' }],
  ['GET', '/api/v1/payments/c2b/payments'],
  ['GET', '/api/v1/payments/c2b/payments/:trans_id'],
  [
    'POST',
    '/api/v1/payments/c2b/register',
    { create: true, shownOnce: ['confirmation_url', 'validation_url'] },
  ],
  ['GET', '/api/v1/payments/c2b/shortcodes'],
  ['DELETE', '/api/v1/payments/c2b/shortcodes/:shortcode'],
  ['POST', '/api/v1/payments/c2b/shortcodes/:shortcode/rotate'],
  ['POST', '/api/v1/payments/c2b/simulate'],
  ['POST', '/api/v1/payments/c2b/validation', { access: 'provider' }],
  ['POST', '/api/v1/payments/reconcile'],
  ['POST', '/api/v1/payments/reversals'],
  ['GET', '/api/v1/payments/reversals/:id'],
  ['GET', '/api/v1/payments/status/:checkout_request_id'],
  ['POST', '/api/v1/payments/stkpush', { create: true }],
  ['POST', '/api/v1/payments/transaction-status'],
  ['GET', '/api/v1/payments/transaction-status/:id'],

  ['POST', '/api/v1/backups', { create: true }],

  ['GET', '/api/v1/tenants'],
  ['POST', '/api/v1/tenants', { create: true, shownOnce: INVITATION }],
  ['GET', '/api/v1/tenants/:tenant_id'],
  ['PUT', '/api/v1/tenants/:tenant_id'],
  ['PATCH', '/api/v1/tenants/:tenant_id'],
  ['DELETE', '/api/v1/tenants/:tenant_id'],
  ['GET', '/api/v1/tenants/:tenant_id/features'],
  ['GET', '/api/v1/tenants/:tenant_id/jobs/:job_id'],
  ['POST', '/api/v1/tenants/:tenant_id/instances', { budget: 'bulk' }],
  ['PUT', '/api/v1/tenants/:tenant_id/features'],
  ['POST', '/api/v1/tenants/:tenant_id/resume'],
  ['POST', '/api/v1/tenants/:tenant_id/suspend'],
  ['PUT', '/api/v1/tenants/:tenant_id/upgrade'],
  ['GET', '/api/v1/tenants/:tenant_id/usage'],
  ['GET', '/api/v1/tenants/:tenant_id/users'],
  ['POST', '/api/v1/tenants/:tenant_id/users', { create: true, shownOnce: INVITATION }],
  ['DELETE', '/api/v1/tenants/:tenant_id/users/:user_id'],

  ['GET', '/api/v1/webhooks'],
  ['POST', '/api/v1/webhooks', { create: true, shownOnce: ['secret'] }],
  ['GET', '/api/v1/webhooks/:id'],
  ['PATCH', '/api/v1/webhooks/:id'],
  ['DELETE', '/api/v1/webhooks/:id'],
  ['POST', '/api/v1/webhooks/:id/rotate-secret'],
  ['GET', '/api/v1/webhooks/deliveries'],
  ['GET', '/api/v1/webhooks/deliveries/:id'],
  ['GET', '/api/v1/webhooks/event-types'],
  ['POST', '/api/v1/webhooks/deliveries/:id/replay', { create: true }],
  ['POST', '/api/v1/webhooks/deliveries/replay', { create: true }],
  ['POST', '/api/v1/webhooks/trigger', { create: true }],
  ['GET', '/api/v1/webhooks/usage'],
]

export interface Route {
  method: Method
  path: string
  service: Owner
  access: Access
  body: BodyClass
  budget: BudgetClass
  /** Creates or moves something: honours `Idempotency-Key`. */
  create: boolean
  /** Answer fields that are secrets shown once: never kept for a replay. */
  shownOnce: readonly string[]
  /** The index (in `path.split('/')`) of the segment that names a tenant, if any. */
  tenantAt?: number
  segments: readonly string[]
}

/** Every route, with each fact spelled out (defaults: token, default body, default budget). */
export const routes: readonly Route[] = declared.map(([method, path, facts = {}]) => {
  const segments = path.split('/')
  const service = segmentOwners[segments[3] ?? '']
  if (!service) throw new Error(`no service owns the segment of ${path}`)
  const tenantAt = segments.indexOf(':tenant_id')
  return {
    method,
    path,
    service,
    access: facts.access ?? 'token',
    body: facts.body ?? 'default',
    budget: facts.budget ?? 'default',
    create: facts.create === true,
    shownOnce: facts.shownOnce ?? [],
    ...(tenantAt < 0 ? {} : { tenantAt }),
    segments,
  }
})

/** Routes by their `/api/v1/{segment}`, so a lookup scans one service's few. */
const bySegment = new Map<string, Route[]>()
for (const r of routes) {
  const list = bySegment.get(r.segments[3]!) ?? []
  list.push(r)
  bySegment.set(r.segments[3]!, list)
}

/** The first path segment after /api/v1/, or undefined. */
export function segmentOf(path: string): string | undefined {
  if (!path.startsWith('/api/v1/')) return undefined
  const end = path.indexOf('/', 8)
  return path.slice(8, end < 0 ? undefined : end)
}

/** The service a path is routed to, by its segment; routes the manifest lacks included. */
export function ownerOf(path: string): Owner | undefined {
  const segment = segmentOf(path)
  return segment ? segmentOwners[segment] : undefined
}

/** Whether `pattern` matches the first `pattern.length` segments of `parts`. */
function matchesHead(pattern: readonly string[], parts: readonly string[]): boolean {
  if (pattern.length > parts.length) return false
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    if (p.startsWith(':') ? parts[i] === '' : p !== parts[i]) return false
  }
  return true
}

/** Negative when `a` is the more specific: a fixed word beats a parameter, then longer wins. */
function bySpecificity(a: Route, b: Route): number {
  const n = Math.min(a.segments.length, b.segments.length)
  for (let i = 0; i < n; i++) {
    const pa = a.segments[i]!.startsWith(':')
    const pb = b.segments[i]!.startsWith(':')
    if (pa !== pb) return pa ? 1 : -1
  }
  return b.segments.length - a.segments.length
}

function best(candidates: Route[]): Route | undefined {
  return candidates.length < 2 ? candidates[0] : candidates.sort(bySpecificity)[0]
}

/**
 * The manifest entry for a request, or undefined for a route the manifest does not list (the
 * gateway still forwards it by segment; it needs a token and gets the default limit and budget).
 *
 * @example
 * findRoute('POST', '/api/v1/statements')?.body // 'upload'
 */
export function findRoute(method: string, path: string): Route | undefined {
  const segment = segmentOf(path)
  const list = segment === undefined ? undefined : bySegment.get(segment)
  if (!list) return undefined
  const parts = path.split('/')
  return best(
    list.filter(
      (r) =>
        r.method === method && r.segments.length === parts.length && matchesHead(r.segments, parts),
    ),
  )
}

/**
 * The tenant a path names, whatever the method: the most specific route whose pattern matches
 * the path or its leading segments decides, so a fixed word where a tenant could stand
 * (`/billing/usage/record`) is never taken for one, and a deeper unknown path under a tenant
 * (`/tenants/acme/anything`) still names it.
 */
export function tenantInPath(path: string): string | undefined {
  const segment = segmentOf(path)
  const list = segment === undefined ? undefined : bySegment.get(segment)
  if (!list) return undefined
  const parts = path.split('/')
  const route = best(list.filter((r) => matchesHead(r.segments, parts)))
  return route?.tenantAt === undefined ? undefined : parts[route.tenantAt]
}

/**
 * The body limit of a request to `service`, in bytes: its route's class, or the default class
 * for a route the manifest does not give this service.
 */
export function bodyLimitOf(
  service: Owner,
  method: string,
  path: string,
  sizes: BodySizes = BODY_LIMITS,
): number {
  const route = findRoute(method, path)
  return sizes[route?.service === service ? route.body : 'default']
}

/** The largest body limit of a service's routes (or of all of them, for the gateway). */
export function largestBodyLimit(
  service: Owner | 'gateway',
  sizes: BodySizes = BODY_LIMITS,
): number {
  let largest = sizes.default
  for (const r of routes)
    if (service === 'gateway' || r.service === service) largest = Math.max(largest, sizes[r.body])
  return largest
}

/**
 * The methods the manifest lists for a path (for a 405 with `Allow` when a request uses another);
 * empty when the path itself is unknown.
 *
 * @example
 * allowedMethods('/api/v1/analytics/summary') // ['GET']
 */
export function allowedMethods(path: string): Method[] {
  const segment = segmentOf(path)
  const list = segment === undefined ? undefined : bySegment.get(segment)
  if (!list) return []
  const parts = path.split('/')
  const methods = list
    .filter((r) => r.segments.length === parts.length && matchesHead(r.segments, parts))
    .map((r) => r.method)
  return [...new Set(methods)]
}

/** The manifest entry of an OpenAPI path (`{id}` placeholders) and method, if listed. */
export function routeOfDocument(method: string, documentPath: string): Route | undefined {
  const path = documentPath.replace(/\{([^}]+)\}/g, ':$1')
  return routes.find((r) => r.method === method.toUpperCase() && r.path === path)
}
