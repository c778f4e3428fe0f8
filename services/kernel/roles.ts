import { ROLES, type Role } from '../../schema/vocabulary.ts'
import { Forbidden } from './errors.ts'
import { PLATFORM_TENANT } from './tenant-id.ts'

export const roles = ROLES
export type { Role }

/**
 * What a request wants to do, in the words of the DESIGN §4 role matrix.
 * - read: analytics, cashflow, transactions, rules, usage
 * - analyze: export CSV/PDF, categorize, override a category
 * - manage: categorization rules, statement import
 * - pay: payments and disbursements
 * - admin: webhooks, users, subscription, invoices
 * - operator: tenants and plans (Admin of the platform tenant only)
 */
export type Action = 'read' | 'analyze' | 'manage' | 'pay' | 'admin' | 'operator'

const allowed: Record<Exclude<Action, 'operator'>, readonly Role[]> = {
  read: roles,
  analyze: ['Admin', 'Manager', 'Analyst'],
  manage: ['Admin', 'Manager'],
  pay: ['Admin', 'Manager'],
  admin: ['Admin'],
}

export interface Actor {
  userId: string
  tenantId: string
  role: Role
  /** The raw bearer token, forwarded on calls to other services. */
  token: string
  jti?: string | undefined
  exp?: number | undefined
}

export function isOperator(actor: Pick<Actor, 'tenantId' | 'role'>): boolean {
  return actor.tenantId === PLATFORM_TENANT && actor.role === 'Admin'
}

export function can(actor: Pick<Actor, 'tenantId' | 'role'>, action: Action): boolean {
  if (isOperator(actor)) return true
  if (action === 'operator') return false
  return allowed[action].includes(actor.role)
}

/** Throws 403 unless the actor's role allows the action. */
export function assertCan(actor: Actor, action: Action): void {
  if (!can(actor, action)) {
    throw new Forbidden(
      action === 'operator'
        ? 'only the platform operator may do this'
        : `the ${actor.role} role may not ${action === 'read' ? 'read this' : `do '${action}' actions`}`,
    )
  }
}

/**
 * The tenant a request acts on: the one named in the path or body, which must be the actor's own
 * unless the actor is the platform operator. Without a named tenant, the actor's.
 *
 * @example
 * const tenantId = tenantFor(actor, params.tenant_id)
 */
export function tenantFor(actor: Actor, named?: string | null): string {
  if (!named || named === actor.tenantId) return actor.tenantId
  if (isOperator(actor)) return named
  throw new Forbidden(`this token is for tenant '${actor.tenantId}', not '${named}'`)
}
