import { version } from './version.ts'

/**
 * What of this process is not serving yet. Every part's `/health` answers 503 naming it until
 * nothing is left (DESIGN §15: the gateway said 200 while the simulator was still 1.4 s away), so
 * a script that waits for health can use any part at once.
 *
 * @example
 * const readiness = createReadiness(['payment', 'gateway', 'simulator'])
 * readiness.done('payment')
 * readiness.answer('gateway', request) // 503 naming gateway and simulator; null once all are done
 */
export function createReadiness(parts: Iterable<string>) {
  const waiting = new Set(parts)
  /** Start-up work that answering does not wait for, with what it is doing. */
  const warming = new Map<string, string>()
  return {
    /** The parts not serving yet, in the order they were named. */
    waiting: () => [...waiting],
    done(...parts: string[]) {
      for (const p of parts) waiting.delete(p)
    },
    /**
     * Work still under way that the parts serve without (the broker connection, consumers
     * subscribing, the outbox replay, rollups catching up): `/health` stays 200 and says so.
     */
    warming: (part: string, detail: string) => void warming.set(part, detail),
    warmed: (part: string) => void warming.delete(part),
    /** What is still warming up: part → what it is doing. */
    stillWarming: () => Object.fromEntries(warming),
    /**
     * A `/health` answer's body with what is still warming up added (`warming`), or undefined
     * when there is nothing to add (another path, nothing warming, not an object).
     */
    decorate(request: Request, body: unknown): Record<string, unknown> | undefined {
      if (warming.size === 0 || !isHealth(request.url)) return undefined
      if (typeof body !== 'object' || body === null || body instanceof Response) return undefined
      return { ...(body as Record<string, unknown>), warming: Object.fromEntries(warming) }
    },
    /** A 503 for a `/health` request while something is not serving yet; otherwise null. */
    answer(service: string, request: Request): Response | null {
      if (waiting.size === 0 || !isHealth(request.url)) return null
      const checks = Object.fromEntries(
        [...waiting].map((p) => [p, { status: 'starting', detail: `${p} is not serving yet` }]),
      )
      return Response.json(
        { service, version, status: 'starting', checks },
        { status: 503, headers: { 'retry-after': '1', 'cache-control': 'no-store' } },
      )
    },
  }
}

export type Readiness = ReturnType<typeof createReadiness>

const isHealth = (url: string) => {
  // Cheap before parsing: only a path ending in /health can be one.
  if (!url.includes('/health')) return false
  try {
    return new URL(url).pathname === '/health'
  } catch {
    return false
  }
}

/** The supervisor's word to its workers that the simulator and a first worker are serving. */
export const PLATFORM_READY = 'platform_ready'
/** How many workers are still starting; /health of those serving says so while there are any. */
export const WORKERS_STARTING = 'workers_starting'

/**
 * In a worker: what its supervisor starts beside the first worker (so this worker's `/health`
 * waits for it), cleared when the supervisor says so over the IPC channel; then, while other
 * workers are still starting, `/health` says so under `warming`.
 */
export function followSupervisorReadiness(readiness: Readiness): void {
  process.on('message', (message: unknown) => {
    const m = message as Record<string, unknown> | null
    if (m?.[PLATFORM_READY]) readiness.done('workers', 'simulator')
    const starting = m?.[WORKERS_STARTING]
    if (typeof starting !== 'number') return
    if (starting > 0)
      readiness.warming('workers', `${starting} more worker${starting === 1 ? '' : 's'} starting`)
    else readiness.warmed('workers')
  })
}
