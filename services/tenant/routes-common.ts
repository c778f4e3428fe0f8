import type { Actor } from '../kernel/roles.ts'
import type { CallInfo } from './users.ts'

/** The OpenAPI details of a tenant route that needs a bearer token. */
export const secured = (summary: string) => ({
  summary,
  tags: ['tenants'],
  security: [{ bearer: [] }],
})

/** What a call to another part carries on the caller's behalf: token, request id, deadline. */
export function callOf(actor: Actor, requestId: string, request: Request): CallInfo {
  const deadline = Number(request.headers.get('x-request-deadline'))
  return {
    token: actor.token,
    requestId,
    deadline: Number.isFinite(deadline) && deadline > 0 ? deadline : undefined,
  }
}
