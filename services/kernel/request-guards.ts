import { TenantNotFound } from '../../schema/errors.ts'
import { PLATFORM_TENANT } from '../../schema/tenant-id.ts'
import type { ServiceContext } from './context.ts'
import { INVOICE_PAYMENT, PURPOSE_HEADER } from './entitlements.ts'
import { Forbidden } from './errors.ts'
import { type Action, type Actor, isOperator } from './roles.ts'
import { assertTenantId } from './tenant-id.ts'
import { PLATFORM_SYNC } from './tokens.ts'

// The checks the service base's `auth` macro makes of a request beyond its token (service.ts).

/**
 * A platform process reading what it keeps a copy of (daemon/profiles.ts, daemon/revocations.ts):
 * an operator or read route, no bearer token, a `GET`, and the purpose `platform-sync` under a valid
 * hop signature (a purpose header alone, from a client, counts for nothing). It acts as the
 * platform's operator and forwards no token.
 */
export function platformReader(
  ctx: ServiceContext<unknown>,
  request: Request,
  action: Action,
): Actor | null {
  if ((action !== 'operator' && action !== 'read') || request.method !== 'GET') return null
  if (!platformCaller(ctx, request)) return null
  return { userId: 'usr_mmp_process', tenantId: PLATFORM_TENANT, role: 'Admin', token: '' }
}

/**
 * Another process of the platform asking as the platform: no bearer token, and the purpose
 * `platform-sync` under a valid hop signature. The internal routes that accept it besides the
 * operator (a replay for a consumer whose broker session was lost, a move finished at start)
 * check it themselves.
 */
export function platformCaller(ctx: ServiceContext<unknown>, request: Request): boolean {
  return (
    !request.headers.has('authorization') &&
    ctx.hop?.trusted(request.headers, PURPOSE_HEADER) === PLATFORM_SYNC
  )
}

/**
 * DESIGN §10: a suspended tenant reads but does not write. Every state-changing request of a
 * tenant user is checked here, once for all services; a service that is the way out says so
 * (`suspendedWrites: 'allow'`). An invoice payment billing makes on the tenant's behalf passes
 * when billing proves it with a signed hop (a purpose header alone, sent straight to a service
 * port, counts for nothing).
 */
export function writesWhileSuspendedRefused(
  ctx: ServiceContext<unknown>,
  request: Request,
  actor: Actor,
): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || isOperator(actor)) return false
  return ctx.hop?.trusted(request.headers, PURPOSE_HEADER) !== INVOICE_PAYMENT
}

/**
 * `assertTenantsExist`, after asking the tenant service once about a tenant this part has not
 * heard of yet (a part on its own data dir, before the tenant's `tenants.changed` arrived).
 */
export async function assertTenantsKnown(
  ctx: ServiceContext<unknown>,
  actor: Actor,
  sources: unknown[],
): Promise<void> {
  const asked = new Set<string>()
  for (;;) {
    try {
      assertTenantsExist(ctx, actor, sources)
      return
    } catch (err) {
      const missing = err instanceof TenantNotFound ? err.extra?.tenant_id : undefined
      if (!ctx.learnTenant || typeof missing !== 'string' || asked.has(missing)) throw err
      asked.add(missing)
      if (!(await ctx.learnTenant(missing))) throw err
    }
  }
}

/**
 * No ghost tenants: the actor's own tenant (a token outliving an erasure) and any tenant a request
 * names by `tenant_id` in its path, query or body must exist, on every service and every door,
 * before anything is read or written. A malformed id is a 422 naming `tenant_id`.
 */
function assertTenantsExist(ctx: ServiceContext<unknown>, actor: Actor, sources: unknown[]): void {
  ctx.registry.assertExists(actor.tenantId)
  for (const source of sources) {
    const named = (source as { tenant_id?: unknown } | null | undefined)?.tenant_id
    if (typeof named === 'string') ctx.registry.assertExists(assertTenantId(named, 'tenant_id'))
  }
}

/**
 * Zero trust (DESIGN §5): the gateway sets X-Tenant-ID, X-User-ID and X-User-Role from the token;
 * a request whose copies disagree with the token it carries is refused.
 */
export function assertHeadersAgree(headers: Headers, actor: Actor): void {
  const checks: Array<[string, string]> = [
    ['x-tenant-id', actor.tenantId],
    ['x-user-id', actor.userId],
    ['x-user-role', actor.role],
  ]
  for (const [name, expected] of checks) {
    const given = headers.get(name)
    if (given !== null && given !== expected) {
      throw new Forbidden(`the ${name} header disagrees with the token`)
    }
  }
}
