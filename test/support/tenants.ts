import { api, type TestPlatform } from './platform.ts'

/**
 * Creates tenants through the gateway as the operator, as a client would: a tenant exists only
 * once the tenant service created it, so tests that invent tenant ids make them this way first.
 * The platform must run the tenant service.
 *
 * @example
 * await createTenants(p.gateway, operator, 'acme', 'beta')
 * await createTenants(p.gateway, operator, { id: 'big', plan: 'pro' })
 */
export async function createTenants(
  gateway: string,
  operatorToken: string,
  ...tenants: Array<string | { id: string; plan?: string; name?: string }>
): Promise<void> {
  for (const t of tenants) {
    const spec = typeof t === 'string' ? { id: t } : t
    const res = await api(gateway, operatorToken).post('/api/v1/tenants', {
      id: spec.id,
      name: spec.name ?? spec.id,
      plan: spec.plan ?? 'free',
      ...ownerOf(spec.id),
    })
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`creating tenant ${spec.id}: ${res.status} ${JSON.stringify(res.body)}`)
  }
}

/** The first Admin `createTenants` gives a tenant: its email and password. */
export function ownerOf(tenantId: string) {
  return {
    admin_email: `owner@${tenantId}.test`,
    admin_password: `${tenantId}-Owner-Passphrase-42`,
  }
}

/**
 * Creates one tenant through the gateway as the operator and signs its first Admin in: a client
 * for the tenant's own requests.
 *
 * @example
 * const admin = await createTenantAdmin(p, { id: 'steady', plan: 'pro' })
 */
export async function createTenantAdmin(
  p: Pick<TestPlatform, 'gateway' | 'login'>,
  spec: { id: string; plan?: string },
): Promise<ReturnType<typeof api>> {
  return (await createTenantOwner(p, spec)).admin
}

/**
 * As `createTenantAdmin`, and the Admin's access token too (for a request straight at a service
 * port, or with headers of its own).
 *
 * @example
 * const { admin, token } = await createTenantOwner(p, { id: 'shop' })
 */
export async function createTenantOwner(
  p: Pick<TestPlatform, 'gateway' | 'login'>,
  spec: { id: string; plan?: string },
): Promise<{ admin: ReturnType<typeof api>; token: string }> {
  await createTenants(p.gateway, await p.login(), spec)
  const owner = ownerOf(spec.id)
  const token = await p.login(owner.admin_email, owner.admin_password)
  return { admin: api(p.gateway, token), token }
}
