import { AppError } from '../kernel/errors.ts'
import type { Actor } from '../kernel/roles.ts'

/** Request checks and the pieces of a request the gateway reads: tenant, budget, path. */
export function assertOwnTenant(actor: Actor, named: string | undefined | null): void {
  if (named && named !== actor.tenantId) {
    throw new AppError(
      'TENANT_MISMATCH',
      `this token is for tenant '${actor.tenantId}', not '${named}'`,
    )
  }
}

/** The top-level `tenant_id` of a JSON object body; anything unparsable is left to the service. */
export function tenantInBody(bytes: ArrayBuffer | Uint8Array): string | undefined {
  if (bytes.byteLength === 0) return undefined
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as unknown
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const named = (value as { tenant_id?: unknown }).tenant_id
      return typeof named === 'string' ? named : undefined
    }
  } catch {}
  return undefined
}

/**
 * The time this request may take: the route budget, shortened by the client's
 * X-Request-Timeout (ms) or X-Request-Deadline (epoch ms) when either is sooner.
 */
export function budgetOf(
  timeout: string | null,
  deadline: string | null,
  routeBudget: number,
): number {
  let budget = routeBudget
  if (timeout) {
    const ms = Number(timeout)
    if (Number.isFinite(ms) && ms >= 1) budget = Math.min(Math.floor(ms), budget)
  }
  if (deadline && /^\d{1,16}$/.test(deadline))
    budget = Math.min(Number(deadline) - Date.now(), budget)
  return budget
}

/** The path with dot segments resolved (WHATWG rules, `%2e` included). */
export function resolvePath(path: string): string {
  try {
    return new URL(path, 'http://gateway').pathname
  } catch {
    return path
  }
}

export function decodePath(path: string): string {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

export function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `the body is larger than ${limit} bytes`)
}

export function isTimeout(err: unknown): boolean {
  const name = (err as Error)?.name
  return name === 'TimeoutError' || name === 'AbortError'
}
