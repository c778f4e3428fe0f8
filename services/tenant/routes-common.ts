import type { Actor } from '../kernel/roles.ts'
import type { JobTurn } from './jobs.ts'
import type { CallInfo } from './users.ts'

/** The OpenAPI details of a tenant route that needs a bearer token. */
export const secured = (summary: string) => ({
  summary,
  tags: ['tenants'],
  security: [{ bearer: [] }],
})

/**
 * What a call to another part carries on the caller's behalf: token, request id, deadline. Work
 * run as a job (`turn`) keeps the request's deadline only until the request is answered 202: a
 * plan change queued behind a long move must still reach billing once nobody waits on it.
 */
export function callOf(
  actor: Actor,
  requestId: string,
  request: Request,
  turn?: JobTurn,
): CallInfo {
  const raw = Number(request.headers.get('x-request-deadline'))
  const deadline = Number.isFinite(raw) && raw > 0 ? raw : undefined
  return {
    token: actor.token,
    requestId,
    get deadline() {
      return turn?.detached() ? undefined : deadline
    },
  }
}
