import type { Database } from 'bun:sqlite'
import type { Db } from './db.ts'
import type { MergePlan } from './move-merge.ts'
import type { TenantTable } from './move-tables.ts'
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

/** The steps of a move, in order (see `moveTenantData`). */
export type MoveStep = 'prepare' | 'copy' | 'merge' | 'catch-up' | 'final' | 'purge' | 'done'

export interface MoveOptions {
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
}

/** What every step of one move shares. */
export interface MoveCtx {
  registry: TenantRegistry
  opts: MoveOptions
  tenantId: string
  fromDir: string
  toDir: string
  sliceMs: number
  inboxSince: string
  step: (step: MoveStep) => void
}
