import type { Database } from 'bun:sqlite'
import type { Db } from './db.ts'
import { dropCapture, readCapture } from './move-capture.ts'
import { applyLogged } from './move-catchup.ts'
import { checkCounts, copyRows } from './move-copy.ts'
import { fenceTenant } from './move-fence.ts'
import { type EarlyMerge, type MergePlan, mergeStaging } from './move-merge.ts'
import { openStaging, placeStaging } from './move-staging.ts'
import { hasOutbox, hasRows, type TenantTable } from './move-tables.ts'
import type { Placement, TenantRegistry } from './registry.ts'

/** One service's share of a move. */
export interface Part {
  service: string
  source: Db
  tables: TenantTable[]
  release: () => void
  stagingPath: string
  targetPath: string
  /** The capture triggers are in the source and not yet dropped. */
  capturing: boolean
  /** Built while the event loop kept running; null until then, or when the tenant had no rows. */
  staging: Database | null
  /** Rows of the tenant in the staging copy, per table. */
  counts: Record<string, number>
  moved: Record<string, number> | null
  /** The target existed and the early tables' rows went into it before the final step. */
  merge: { target: Db; plan: MergePlan; merged: Record<string, number> | null } | null
  /** The change log: read up to `at`; keys redone before the final step and in it. */
  logged: { at: number; before: number; final: number }
}

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
      part.counts = copyRows(source, part.staging, part.tables, tenantId, ctx.inboxSince)
      checkCounts(source, part.staging, part.tables, part.counts, tenantId, part.targetPath)
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
      mergeStaging(part.merge.target, part.stagingPath, part.tables, tenantId, merged)
    } else if (part.moved && !placeStaging(part.stagingPath, part.targetPath)) {
      mergeStaging(
        registry.openAt(part.service, opts.to, tenantId),
        part.stagingPath,
        part.tables,
        tenantId,
      )
    }
  }
  // A writer that looked up the old placement before the switch is refused, not lost.
  for (const part of parts) fenceTenant(part.source, tenantId, part.tables)
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
