import type { Delivery } from './delivery.ts'
import { darajaError } from './model.ts'
import { readJsonBody } from './rules.ts'
import type { Kind, Store } from './store.ts'

/** What the simulator's route groups share: its memory, its callbacks and its token check. */
export interface Sim {
  store: Store
  delivery: Delivery
  delayMs: number
  /** Production-like (SimulatorOptions.production): no http URLs, no C2B re-registration. */
  production: boolean
  /**
   * Daraja's answer to a missing, stale or unknown bearer token, the same on every API (HTTP 404
   * `404.001.03` "Invalid Access Token", as the gateway in front of them answers); null when the
   * request carries the live token.
   */
  tokenRefused(request: Request): Response | null
  /**
   * Test switch (`POST /simulator/faults`): how many of the next Transaction Status requests are
   * answered HTTP 503 (Daraja unavailable) instead of being taken.
   */
  faults: { status: number }
  /** Calls back a remembered request after `ms`; its pending row goes once it was delivered. */
  schedule(kind: Kind, id: string, ms: number): void
}

/**
 * A Daraja API request checked as every API checks it first: the path's version (`versions`,
 * when the path has one: another is 404.001.01), the live token, a JSON object body. Returns the
 * body, or the Response that refuses the request.
 */
export async function readDarajaRequest({
  sim,
  input,
}: {
  sim: Sim
  input: { request: Request; version?: string; versions?: readonly string[] }
}): Promise<Record<string, unknown> | Response> {
  const { request, version, versions } = input
  if (versions && !versions.includes(version ?? ''))
    return darajaError(404, '404.001.01', 'Resource not found')
  const denied = sim.tokenRefused(request)
  if (denied) return denied
  return readJsonBody(request)
}
