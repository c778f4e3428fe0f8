import { invalidField } from './errors.ts'
import { PLATFORM_TENANT } from './vocabulary.ts'

/** A tenant id becomes a folder name, so it is checked here, once, for every entry point. */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/
export { PLATFORM_TENANT }

const RESERVED = new Set(['_shared', 'platform'])

export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && TENANT_ID_PATTERN.test(value)
}

/**
 * Returns the id or throws a 422 naming the field.
 *
 * @example
 * assertTenantId(params.tenant_id, 'tenant_id')
 */
export function assertTenantId(value: unknown, field = 'tenant_id'): string {
  if (!isTenantId(value)) {
    throw invalidField(field, 'must match ^[a-z0-9][a-z0-9-]{1,62}$')
  }
  return value
}

/** For creating a tenant: the reserved names are refused as well. */
export function assertNewTenantId(value: unknown, field = 'id'): string {
  const id = assertTenantId(value, field)
  if (RESERVED.has(id)) throw invalidField(field, `'${id}' is reserved`)
  return id
}
