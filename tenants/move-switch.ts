import { dropCapture, readCapture } from './move-capture.ts'
import { applyLogged } from './move-catchup.ts'
import { checkCounts, copyRows } from './move-copy.ts'
import { fenceTenant } from './move-fence.ts'
import { type EarlyMerge, mergeStaging } from './move-merge.ts'
import type { Part } from './move-part.ts'
import { openStaging, placeStaging } from './move-staging.ts'
import { hasOutbox, hasRows } from './move-tables.ts'
import type { Placement, TenantRegistry } from './registry.ts'

/**
 * Step 2 of `moveTenantData`, run with every source locked for writing: the captured rows are
 * applied to the staging copies, which are put in place; the old file is fenced and the placement
 * switched.
 */
export function finalStep(
  registry: TenantRegistry,
  parts: Part[],
  opts: { to: Placement; switchPlacement: () => void; afterCopy?: () => void },
  ctx: { tenantId: string; inboxSince: string },
) {
  const { tenantId } = ctx
  const early = new Map<Part, EarlyMerge>()
  for (const part of parts) {
    const source = part.source.sqlite
    if (part.staging) {
      part.staging.run('BEGIN')
      // What was logged since the last pass before this step (tenants/move-catchup.ts).
      const logged = readCapture(part.source, tenantId, part.tables, part.logged.at)
      part.logged.final = logged.count
      const redo = applyLogged(part, logged.keys, tenantId)
      if (redo && part.merge?.merged) {
        const { plan, merged } = part.merge
        early.set(part, { plan, merged, ...redo, counts: { ...part.counts } })
      }
    } else if (hasRows(source, part.tables, tenantId)) {
      // Rows written since the move began to a file that had none: copied now, under the lock.
      part.staging = openStaging(
        part.stagingPath,
        registry.migrationsOf(part.service),
        part.tables,
        part.targetPath,
      )
      part.staging.run('BEGIN')
      const { staging, tables, targetPath } = part
      part.counts = copyRows({
        from: source,
        staging,
        tables,
        tenantId,
        inboxSince: ctx.inboxSince,
      })
      checkCounts({ source, staging, tables, copied: part.counts, tenantId, targetPath })
    } else {
      continue
    }
    const moved = Object.fromEntries(Object.entries(part.counts).filter(([, n]) => n > 0))
    part.staging.run('COMMIT')
    part.staging.close()
    part.staging = null
    if (Object.keys(moved).length) part.moved = moved
  }
  for (const part of parts) {
    if (part.capturing) dropCapture(part.source, tenantId)
  }
  for (const part of parts) {
    const merged = early.get(part)
    // Merged early, the target holds rows even when none are left to move: they must go.
    if (merged && part.merge) {
      const { target } = part.merge
      mergeStaging({ target, path: part.stagingPath, tables: part.tables, tenantId, early: merged })
    } else if (part.moved && !placeStaging(part.stagingPath, part.targetPath)) {
      const target = registry.openAt(part.service, opts.to, tenantId)
      mergeStaging({ target, path: part.stagingPath, tables: part.tables, tenantId })
    }
  }
  // A writer that looked up the old placement before the switch is refused, not lost.
  for (const part of parts) fenceTenant({ db: part.source, tenantId, tables: part.tables })
  // Every copy in place, the old placement still authoritative: a crash here must lose nothing.
  opts.afterCopy?.()
  opts.switchPlacement()
  for (const part of parts) {
    if (part.moved && hasOutbox(part.source.sqlite)) {
      part.source.sqlite
        .query('DELETE FROM outbox WHERE tenant_id = ? AND sent_at IS NULL')
        .run(tenantId)
    }
  }
}
