import type { ServiceContext, ServiceInstance, ServiceName } from '../services/kernel/context.ts'
import type { Readiness } from './readiness.ts'
import { serviceModules } from './services.ts'
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
