import type { Database } from 'bun:sqlite'
import type { Db } from './db.ts'
import type { MergePlan } from './move-merge.ts'
import type { TenantTable } from './move-tables.ts'

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
