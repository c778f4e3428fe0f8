import { t } from 'elysia'
import { type Actor, isOperator, tenantFor } from '../kernel/roles.ts'

/** The OpenAPI detail of a webhook route: its summary, the tag, bearer auth. */
export const secured = (summary: string) => ({
  summary,
  tags: ['webhooks'],
  security: [{ bearer: [] }],
})

/** Tenant a lookup is limited to: the actor's own, or any (null) for the platform operator. */
export const scopeOf = (actor: Actor, named?: string): string | null =>
  isOperator(actor) && !named ? null : tenantFor(actor, named)

export const IdParams = t.Object({ id: t.String() })
