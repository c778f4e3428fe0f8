import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { dropCapture, startCapture } from './move-capture.ts'
import { catchUp } from './move-catchup.ts'
import { dropFences } from './move-fence.ts'
import { mergeEarly, planMerge } from './move-merge.ts'
import type { MoveCtx, Part } from './move-part.ts'
import { deleteInSlices } from './move-purge.ts'
import { copySnapshot } from './move-snapshot.ts'
import { openStaging, removeStaging, reopenStaging, stagingPath } from './move-staging.ts'
import { hasRows, nextTurn, tablesOf } from './move-tables.ts'
import { placementFolder, type TenantRegistry } from './registry.ts'

/**
 * The steps of a tenant move (tenants/move.ts) that work on one service's share of it (`Part`):
 * opened, copied while the event loop keeps turning, and closed after the move, done or failed.
 */

/** Whether the tenant's current placement keeps its files in `dir`. */
const switchedTo = (registry: TenantRegistry, tenantId: string, dir: string) =>
  placementFolder(registry.dataDir, registry.placement(tenantId), tenantId) === dir

/** A tenant coming back to a file it once left: its fences there come down first. */
export function dropTargetFences({ ctx }: { ctx: MoveCtx }): void {
  for (const service of ctx.opts.services) {
    if (!existsSync(join(ctx.toDir, `${service}.db`))) continue
    const target = ctx.registry.openAt(service, ctx.opts.to, ctx.tenantId)
    target.write(() => dropFences(target, ctx.tenantId))
  }
}

/** The service's share of the move, its source held open; null when it has no file to move. */
export function openPart({
  ctx,
  input,
}: {
  ctx: MoveCtx
  input: { service: string }
}): Part | null {
  const { service } = input
  if (!existsSync(join(ctx.fromDir, `${service}.db`))) return null
  ctx.step('prepare')
  const source = ctx.registry.openAt(service, ctx.opts.from, ctx.tenantId)
  source.write(() => dropFences(source, null))
  return {
    service,
    source,
    tables: tablesOf(source.sqlite),
    release: source.hold(),
    stagingPath: stagingPath(ctx.toDir, service, ctx.tenantId),
    targetPath: join(ctx.toDir, `${service}.db`),
    capturing: false,
    staging: null,
    counts: {},
    moved: null,
    merge: null,
    logged: { at: 0, before: 0, final: 0 },
  }
}

/**
 * Step 1 for one service: the tenant's writes logged from now on, a snapshot copied into the
 * staging file, the early tables merged into an existing target, what changed meanwhile redone.
 */
export async function copyPart({ ctx, input: part }: { ctx: MoveCtx; input: Part }): Promise<void> {
  const { tenantId } = ctx
  if (!hasRows(part.source.sqlite, part.tables, tenantId)) return
  part.capturing = true
  await startCapture(part.source, tenantId, part.tables)
  await nextTurn()
  const migrations = ctx.registry.migrationsOf(part.service)
  openStaging(part.stagingPath, migrations, part.tables, part.targetPath).close()
  await nextTurn()
  ctx.step('copy')
  part.counts = await copySnapshot(part.source.path, part.stagingPath, part.tables, {
    tenantId,
    inboxSince: ctx.inboxSince,
    target: part.targetPath,
  })
  if (existsSync(part.targetPath)) await mergeIntoTarget({ ctx, input: part })
  await nextTurn()
  part.staging = reopenStaging(part.stagingPath)
  ctx.step('catch-up')
  await catchUp(part, tenantId)
}

/** The early tables' rows into the existing target file, a few ms at a time. */
async function mergeIntoTarget({ ctx, input: part }: { ctx: MoveCtx; input: Part }) {
  const target = ctx.registry.openAt(part.service, ctx.opts.to, ctx.tenantId)
  const plan = planMerge(target, part.tables)
  if (!plan.early.length) return
  ctx.step('merge')
  part.merge = { target, plan, merged: null }
  const release = target.hold()
  try {
    part.merge.merged = await mergeEarly(target, part.stagingPath, plan, {
      tenantId: ctx.tenantId,
      sliceMs: ctx.sliceMs,
      expected: part.counts,
    })
  } finally {
    release()
  }
}

/**
 * After the move, done or failed: staging files removed, sources released; after a failure the
 * capture triggers dropped and rows merged early into a target never switched to deleted.
 */
export async function closeParts({
  ctx,
  input,
}: {
  ctx: MoveCtx
  input: { parts: Part[]; committed: boolean }
}): Promise<void> {
  const { tenantId } = ctx
  for (const part of input.parts) {
    // Rows merged early into a target the tenant never switched to are stale copies.
    if (part.merge && !input.committed && !switchedTo(ctx.registry, tenantId, ctx.toDir)) {
      const target = part.merge.target
      try {
        await deleteInSlices(target, tablesOf(target.sqlite), tenantId, ctx.sliceMs)
      } catch {
        // Left for the caller's purge of the target, as after a crash.
      }
    }
    part.staging?.close()
    removeStaging(part.stagingPath)
    // Dropped by the final step when it committed; after a failure anywhere, here.
    if (part.capturing && !input.committed) {
      try {
        part.source.write(() => dropCapture(part.source, tenantId))
      } catch {
        // Left for settleMoveLeftovers: the triggers only log, they change nothing.
      }
    }
    part.release()
  }
}
