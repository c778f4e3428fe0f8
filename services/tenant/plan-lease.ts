import { join } from 'node:path'
import { hasSiblings, type ServiceContext } from '../kernel/context.ts'
import { type Lease, openLease } from '../kernel/lease.ts'

/**
 * The lease a worker holds on one tenant while it changes the tenant's plan and moves its data
 * (`<data_dir>/run/leases.db`, beside the background lease). Held by a live pid, it keeps every
 * other worker's change of the same tenant waiting, and tells a worker resuming interrupted moves
 * that this one is not interrupted. A single process needs none (null).
 */
export function planLease(ctx: ServiceContext, tenantId: string): Lease | null {
  if (!hasSiblings(ctx)) return null
  // Long: a big move takes minutes, and a holder that died is replaced at once by its pid.
  return openLease(join(ctx.registry.dataDir, 'run', 'leases.db'), `tenant-plan:${tenantId}`, {
    ttlMs: 3_600_000,
  })
}

/** Runs `fn` holding the tenant's plan lease, waiting for another worker's change to finish. */
export async function underPlanLease<T>(
  ctx: ServiceContext,
  tenantId: string,
  fn: () => Promise<T> | T,
): Promise<T> {
  const lease = planLease(ctx, tenantId)
  if (!lease) return fn()
  try {
    while (!lease.tryAcquire()) await Bun.sleep(20)
    return await fn()
  } finally {
    lease.release()
    lease.close()
  }
}
