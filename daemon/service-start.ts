import type { ServiceContext, ServiceInstance, ServiceName } from '../services/kernel/context.ts'
import { createTokenVerifier } from '../services/kernel/tokens.ts'
import type { Config } from './config.ts'
import type { Readiness } from './readiness.ts'
import { serviceModules } from './services.ts'
import { idleTimeoutFloorS } from './settings.ts'
import { type SliceSource, sliceOf } from './slices.ts'

/** An Elysia app's global hooks, which the ServiceInstance type does not name. */
interface Hookable {
  onRequest(hook: (c: { request: Request }) => Response | undefined): unknown
  onAfterHandle(
    hook: (c: { request: Request; response: unknown }) => Record<string, unknown> | undefined,
  ): unknown
}

/** What every service's context holds alike; its name and settings slice are its own. */
export type SharedContext = Omit<ServiceContext, 'name' | 'settings'>

/** Builds one service with its typed settings slice (daemon/slices.ts). */
export async function createService<N extends ServiceName>(
  name: N,
  shared: SharedContext,
  from: SliceSource,
): Promise<ServiceInstance> {
  const mod = (await serviceModules[name]()).default
  return mod.create({ ...shared, name, settings: sliceOf(name, from) })
}

/**
 * A service's `/health` answers 503 naming what of the process is not serving yet, and once it
 * serves, says what is still warming up (daemon/readiness.ts).
 */
export function answerHealthWith(instance: ServiceInstance, name: string, readiness: Readiness) {
  const hooks = instance.app as unknown as Hookable
  hooks.onRequest(({ request }) => readiness.answer(name, request) ?? undefined)
  hooks.onAfterHandle(({ request, response }) => readiness.decorate(request, response))
}

/** The token verifier of this process, as configured. */
export function processTokens(
  config: Config,
  publicKey: Parameters<typeof createTokenVerifier>[0],
  worker: boolean,
) {
  return createTokenVerifier(
    publicKey,
    {
      issuer: config.get('jwt.issuer'),
      audience: config.get('jwt.audience'),
      clockToleranceSec: config.get('jwt.clock_tolerance_s'),
    },
    {
      // Revocations older than the longest token lifetime can no longer match a live token.
      maxTokenAgeSec:
        config.get<number>('jwt.access_ttl_s') + config.get<number>('jwt.clock_tolerance_s'),
      // A key revoked through a sibling worker must stop here at once too: workers ask auth's
      // database each time (a lookup by hash) instead of reusing an answer.
      apiKeyCacheMs: worker ? 0 : undefined,
    },
  )
}

/**
 * The services' idle timeout: longer than the longest route budget, so a spent budget is always
 * answered with a 504 before the server drops an idle connection (DESIGN §15).
 */
export function idleTimeoutOf(config: Config): number {
  return idleTimeoutFloorS((key) => config.get(key))
}

/** The gateway's idle timeout: `gateway.idle_timeout_s`, or the services' when it is 0. */
export function gatewayIdleTimeoutOf(config: Config): number {
  return config.get<number>('gateway.idle_timeout_s') || idleTimeoutOf(config)
}
