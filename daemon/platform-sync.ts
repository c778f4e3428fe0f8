import { PURPOSE_HEADER } from '../services/kernel/entitlements.ts'
import type { ServiceClient } from '../services/kernel/http-client.ts'
import type { ServiceName } from '../services/kernel/service-names.ts'
import { PLATFORM_SYNC } from '../services/kernel/tokens.ts'

/**
 * A `GET` of what another part owns, asked as the platform (the `platform-sync` purpose under the
 * hop signature): a part needs the hop key for it, not the JWT private key.
 *
 * @example
 * const list = await platformRead<{ data: Tenant[] }>(client, 'tenant', '/api/v1/tenants')
 */
export function platformRead<T>(
  client: ServiceClient,
  service: ServiceName,
  path: string,
  deadline?: number,
): Promise<T> {
  return client.call<T>(service, path, {
    headers: { [PURPOSE_HEADER]: PLATFORM_SYNC },
    ...(deadline ? { deadline } : {}),
  })
}
