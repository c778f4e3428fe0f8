import { api } from './platform.ts'

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
      admin_email: `owner@${spec.id}.test`,
      admin_password: `${spec.id}-Owner-Passphrase-42`,
    })
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`creating tenant ${spec.id}: ${res.status} ${JSON.stringify(res.body)}`)
  }
}
