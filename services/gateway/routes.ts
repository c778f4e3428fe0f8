import { ownerOf, routes, segmentOwners } from '../../schema/routes.ts'
import type { ServiceName } from '../kernel/context.ts'

/** The service a path is routed to (schema/routes.ts `segmentOwners`), or undefined. */
export function serviceFor(path: string): ServiceName | undefined {
  return ownerOf(path)
}

/** Every service the gateway routes to. */
export const routedServices: readonly ServiceName[] = [...new Set(Object.values(segmentOwners))]

const WORD = /^[a-z][a-z_.-]{0,31}$/
const ID_LIKE = /\d|_/
const labels = new Map<string, string>()
/** Segments whose next segment is a tenant id (`/tenants/{tenant_id}`), a word or not. */
const TENANT_NEXT = new Set(routes.filter((r) => r.tenantAt === 4).map((r) => r.segments[3]))

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
  if (!segmentOwners[segment]) label = 'unknown'
  else if (!next) label = `/api/v1/${segment}`
  else if (!TENANT_NEXT.has(segment) && WORD.test(next) && !ID_LIKE.test(next))
    label = `/api/v1/${segment}/${next}`
  else label = `/api/v1/${segment}/:id`
  if (labels.size < 10_000) labels.set(path, label)
  return label
}
