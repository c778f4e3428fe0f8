import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db } from './db.ts'
import { dropCapture, startCapture } from './move-capture.ts'
import { catchUp } from './move-catchup.ts'
import { dropFences } from './move-fence.ts'
import { mergeEarly, planMerge } from './move-merge.ts'
import type { Part } from './move-part.ts'
import { DELETE_SLICE_MS, deleteInSlices } from './move-purge.ts'
import { copySnapshot } from './move-snapshot.ts'
import {
  openStaging,
  removeStaging,
  reopenStaging,
  stagingPath,
  syncFileAsync,
} from './move-staging.ts'
import { finalStep } from './move-switch.ts'
import { hasRows, nextTurn, type TenantTable, tablesOf } from './move-tables.ts'
import { type Placement, placementFolder, type TenantRegistry } from './registry.ts'

export {
  eraseTenantData,
  purgeTenantRows,
  purgeTenantRowsInSlices,
  removeDatabaseFile,
  settleMoveLeftovers,
} from './move-purge.ts'
export { copySnapshot, type TenantTable }

/** Consumer inbox records younger than this travel with the tenant, so redeliveries stay no-ops. */
export const INBOX_WINDOW_MS = 7 * 86_400_000

/** Every table of a database that holds tenant rows (see `tablesOf`). */
export const tenantTables = (db: Db): TenantTable[] => tablesOf(db.sqlite)

/** Whether the tenant's current placement keeps its files in `dir`. */
const switchedTo = (registry: TenantRegistry, tenantId: string, dir: string) =>
  placementFolder(registry.dataDir, registry.placement(tenantId), tenantId) === dir

/** The steps of a move, in order (see `moveTenantData`). */
export type MoveStep = 'prepare' | 'copy' | 'merge' | 'catch-up' | 'final' | 'purge' | 'done'

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
  opts: {
    tenantId: string
    from: Placement
    to: Placement
    services: readonly string[]
    switchPlacement: () => void
    /** Called when every copy is in place and the old placement is still current (crash tests). */
    afterCopy?: () => void
    now?: Date
    /** How long a slice of deleting runs before the event loop gets a turn. */
    sliceMs?: number
    /** Told when the move enters each step (bench/tenant-move.ts times the event loop by step). */
    onStep?: (step: MoveStep) => void
  },
): Promise<MoveReport> {
  const tenantId = assertTenantId(opts.tenantId)
  const changed = { before: 0, final: 0 }
  const report: MoveReport = { moved: {}, total: 0, changed }
  const fromDir = placementFolder(registry.dataDir, opts.from, tenantId)
  const toDir = placementFolder(registry.dataDir, opts.to, tenantId)
  if (fromDir === toDir) {
    opts.switchPlacement()
    return report
  }
  const sliceMs = opts.sliceMs ?? DELETE_SLICE_MS
  const inboxSince = new Date((opts.now ?? new Date()).getTime() - INBOX_WINDOW_MS).toISOString()
  const parts: Part[] = []
  let committed = false
  const step = opts.onStep ?? (() => {})
  try {
    step('prepare')
    for (const service of opts.services) {
      // A tenant coming back to a file it once left: its fences there come down first.
      if (existsSync(join(toDir, `${service}.db`))) {
        const target = registry.openAt(service, opts.to, tenantId)
        target.write(() => dropFences(target, tenantId))
      }
    }
    for (const service of opts.services) {
      if (!existsSync(join(fromDir, `${service}.db`))) continue
      step('prepare')
      const source = registry.openAt(service, opts.from, tenantId)
      source.write(() => dropFences(source, null))
      const part: Part = {
        service,
        source,
        tables: tenantTables(source),
        release: source.hold(),
        stagingPath: stagingPath(toDir, service, tenantId),
        targetPath: join(toDir, `${service}.db`),
        capturing: false,
        staging: null,
        counts: {},
        moved: null,
        merge: null,
        logged: { at: 0, before: 0, final: 0 },
      }
      parts.push(part)
      if (!hasRows(source.sqlite, part.tables, tenantId)) continue
      part.capturing = true
      await startCapture(source, tenantId, part.tables)
      await nextTurn()
      openStaging(
        part.stagingPath,
        registry.migrationsOf(service),
        part.tables,
        part.targetPath,
      ).close()
      await nextTurn()
      step('copy')
      part.counts = await copySnapshot(part.source.path, part.stagingPath, part.tables, {
        tenantId,
        inboxSince,
        target: part.targetPath,
      })
      if (existsSync(part.targetPath)) {
        const target = registry.openAt(service, opts.to, tenantId)
        const plan = planMerge(target, part.tables)
        if (plan.early.length) {
          step('merge')
          part.merge = { target, plan, merged: null }
          const release = target.hold()
          try {
            part.merge.merged = await mergeEarly(target, part.stagingPath, plan, {
              tenantId,
              sliceMs,
              expected: part.counts,
            })
          } finally {
            release()
          }
        }
      }
      await nextTurn()
      part.staging = reopenStaging(part.stagingPath)
      step('catch-up')
      await catchUp(part, tenantId)
    }
    // What the tenant changed while the later services copied.
    for (const part of parts) await catchUp(part, tenantId)
    // The pages those passes changed reach the disk now, not in the sync under the lock.
    for (const part of parts) {
      if (part.staging && !part.merge?.merged) await syncFileAsync(part.stagingPath)
    }

    const lockAll = (i: number): void => {
      if (i === parts.length) {
        finalStep(registry, parts, opts, { tenantId, inboxSince })
        return
      }
      parts[i]!.source.write(() => {
        parts[i]!.source.sqlite.run('PRAGMA defer_foreign_keys = ON')
        lockAll(i + 1)
      })
    }
    await nextTurn()
    step('final')
    lockAll(0)
    committed = true

    for (const part of parts) {
      if (!part.moved) continue
      await nextTurn()
      // Opened through the registry now: its relay publishes the moved unsent outbox rows.
      registry.openAt(part.service, opts.to, tenantId)
      report.moved[part.service] = part.moved
    }
    await nextTurn()
    step('purge')
    for (const part of parts) {
      if (part.moved) await deleteInSlices(part.source, part.tables, tenantId, sliceMs)
    }
  } finally {
    for (const part of parts) {
      // Rows merged early into a target the tenant never switched to are stale copies.
      if (part.merge && !committed && !switchedTo(registry, tenantId, toDir)) {
        try {
          await deleteInSlices(
            part.merge.target,
            tablesOf(part.merge.target.sqlite),
            tenantId,
            sliceMs,
          )
        } catch {
          // Left for the caller's purge of the target, as after a crash.
        }
      }
      part.staging?.close()
      removeStaging(part.stagingPath)
      // Dropped by the final step when it committed; after a failure anywhere, here.
      if (part.capturing && !committed) {
        try {
          part.source.write(() => dropCapture(part.source, tenantId))
        } catch {
          // Left for settleMoveLeftovers: the triggers only log, they change nothing.
        }
      }
      part.release()
    }
  }
  step('done')
  for (const part of parts) {
    changed.before += part.logged.before
    changed.final += part.logged.final
  }
  for (const tables of Object.values(report.moved)) {
    for (const n of Object.values(tables)) report.total += n
  }
  return report
}
