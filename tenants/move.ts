import { assertTenantId } from '../schema/tenant-id.ts'
import { catchUp } from './move-catchup.ts'
import type { MoveCtx, MoveOptions, Part } from './move-part.ts'
import { DELETE_SLICE_MS, deleteInSlices } from './move-purge.ts'
import { copySnapshot } from './move-snapshot.ts'
import { syncFileAsync } from './move-staging.ts'
import { closeParts, copyPart, dropTargetFences, openPart } from './move-steps.ts'
import { finalStep } from './move-switch.ts'
import { nextTurn } from './move-tables.ts'
import { placementFolder, type TenantRegistry } from './registry.ts'

export type { MoveOptions, MoveStep } from './move-part.ts'
export {
  eraseTenantData,
  purgeTenantRows,
  purgeTenantRowsInSlices,
  removeDatabaseFile,
  settleMoveLeftovers,
} from './move-purge.ts'
export { copySnapshot }

/** Consumer inbox records younger than this travel with the tenant, so redeliveries stay no-ops. */
export const INBOX_WINDOW_MS = 7 * 86_400_000

export interface MoveReport {
  /** Rows moved per service and table. */
  moved: Record<string, Record<string, number>>
  total: number
  /** Rows the tenant changed while it moved: redone before the final step, and in it. */
  changed?: { before: number; final: number }
}

/**
 * Moves one tenant's rows between two placements (Free→Pro, Pro→Enterprise, downgrades), for
 * every service whose database exists under the old placement, while other tenants of the same
 * files keep being served: the copy never holds a write lock across a turn of the event loop.
 *
 * 1. For each source with rows of the tenant, triggers start logging the rowids of the tenant's
 *    rows written from now on (tenants/move-capture.ts); a thread of the move's own then reads a
 *    snapshot and copies it into a staging file beside the target (tenants/move-snapshot.ts,
 *    tenants/move-staging.ts), so the event loop keeps serving meanwhile. Other tenants write as
 *    usual; the moving tenant's writes still go to the old placement and are logged. When the
 *    target file exists (a downgrade into the shared file), the rows of the tables that have a
 *    key of their own go into it now, a few ms at a time (tenants/move-merge.ts).
 * 2. The final step, synchronous: every source is locked (`BEGIN IMMEDIATE`, nested), the logged
 *    rows are copied again into the staging files (the snapshot's copy was counted against the
 *    snapshot; the logged rows are applied by rowid and counted as they go), the triggers
 *    dropped, the staging files synced and put in place (renamed in when the target file does
 *    not exist; otherwise the logged rows are redone in the target and the tables merged whole
 *    that could not go early), `switchPlacement` makes the new placement current, the tenant's
 *    unsent outbox rows leave the source (so only the target's relay publishes them) and the
 *    locks are released. It costs the logged rows, not the moved ones.
 * 3. The tenant's rows, stale now, are deleted from the sources in slices.
 *
 * Every step but the final one lets the event loop turn every few ms (`onStep` names them).
 * A failure before the switch leaves the old placement authoritative (rows merged early into the
 * target are deleted; copies are cleared on the next attempt, capture triggers and staging files
 * removed); a crash after it
 * leaves stale source rows that `purgeTenantRows` removes, and `settleMoveLeftovers` clears what a
 * crash left of the capture. Outbox rows move with their sent state; recent inbox records are
 * copied so redelivered events stay no-ops.
 *
 * @example
 * await moveTenantData(registry, { tenantId, from, to, services, switchPlacement: () => registry.setPlacement(tenantId, to) })
 */
export async function moveTenantData(
  registry: TenantRegistry,
  opts: MoveOptions,
): Promise<MoveReport> {
  const tenantId = assertTenantId(opts.tenantId)
  const changed = { before: 0, final: 0 }
  const report: MoveReport = { moved: {}, total: 0, changed }
  const ctx: MoveCtx = {
    registry,
    opts,
    tenantId,
    fromDir: placementFolder(registry.dataDir, opts.from, tenantId),
    toDir: placementFolder(registry.dataDir, opts.to, tenantId),
    sliceMs: opts.sliceMs ?? DELETE_SLICE_MS,
    inboxSince: new Date((opts.now ?? new Date()).getTime() - INBOX_WINDOW_MS).toISOString(),
    step: opts.onStep ?? (() => {}),
  }
  if (ctx.fromDir === ctx.toDir) {
    opts.switchPlacement()
    return report
  }
  const parts: Part[] = []
  let committed = false
  try {
    ctx.step('prepare')
    dropTargetFences({ ctx })
    for (const service of opts.services) {
      const part = openPart({ ctx, input: { service } })
      if (!part) continue
      parts.push(part)
      await copyPart({ ctx, input: part })
    }
    // What the tenant changed while the later services copied.
    for (const part of parts) await catchUp(part, tenantId)
    // The pages those passes changed reach the disk now, not in the sync under the lock.
    for (const part of parts) {
      if (part.staging && !part.merge?.merged) await syncFileAsync(part.stagingPath)
    }
    await nextTurn()
    ctx.step('final')
    lockAndSwitch({ ctx, input: parts })
    committed = true
    await publishAndPurge({ ctx, input: { parts, report } })
  } finally {
    await closeParts({ ctx, input: { parts, committed } })
  }
  ctx.step('done')
  for (const part of parts) {
    changed.before += part.logged.before
    changed.final += part.logged.final
  }
  for (const tables of Object.values(report.moved)) {
    for (const n of Object.values(tables)) report.total += n
  }
  return report
}

/** Step 2: every source locked (nested), then the final step and the switch under the locks. */
function lockAndSwitch({ ctx, input: parts }: { ctx: MoveCtx; input: Part[] }): void {
  const lockAll = (i: number): void => {
    if (i === parts.length) {
      finalStep(ctx.registry, parts, ctx.opts, {
        tenantId: ctx.tenantId,
        inboxSince: ctx.inboxSince,
      })
      return
    }
    parts[i]!.source.write(() => {
      parts[i]!.source.sqlite.run('PRAGMA defer_foreign_keys = ON')
      lockAll(i + 1)
    })
  }
  lockAll(0)
}

/** Step 3: the targets opened through the registry (their relays publish), the sources purged. */
async function publishAndPurge({
  ctx,
  input,
}: {
  ctx: MoveCtx
  input: { parts: Part[]; report: MoveReport }
}): Promise<void> {
  for (const part of input.parts) {
    if (!part.moved) continue
    await nextTurn()
    // Opened through the registry now: its relay publishes the moved unsent outbox rows.
    ctx.registry.openAt(part.service, ctx.opts.to, ctx.tenantId)
    input.report.moved[part.service] = part.moved
  }
  await nextTurn()
  ctx.step('purge')
  for (const part of input.parts) {
    if (part.moved) await deleteInSlices(part.source, part.tables, ctx.tenantId, ctx.sliceMs)
  }
}
