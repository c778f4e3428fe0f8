import { and, desc, eq, inArray } from 'drizzle-orm'
import { categorized, learned, rules as rulesTable } from '../../schema/categorizer/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import { NaiveBayes } from './bayes.ts'
import { defaultRules, type Rule } from './default-rules.ts'
import { Categorizer, type Learned } from './engine.ts'
import { type Category, isCategory } from './text.ts'

/** Reload rules and lessons at least this often, so several processes converge. */
const RELOAD_MS = 10_000
/**
 * Moves when another connection (a sibling worker's rule change, the CLI) commits to the file; this
 * connection's own commits leave it alone, and they invalidate the entry themselves.
 */
const OTHERS_WROTE = 'PRAGMA data_version'
/** Retrain the model from confirmed labels at most this often (an override retrains at once). */
const RETRAIN_MS = 60_000
/** Confirmed labels a model learns from, most recent first. */
const TRAINING_ROWS = 20_000

export function ruleOf(row: typeof rulesTable.$inferSelect): Rule {
  return {
    id: row.id,
    name: row.name,
    match: row.match as Rule['match'],
    pattern: row.pattern,
    category: row.category as Category,
    priority: row.priority,
    confidence: row.confidence,
    direction: (row.direction as Rule['direction']) ?? null,
    minAmount: row.minAmount,
    maxAmount: row.maxAmount,
    counterparty: row.counterparty,
    active: row.active,
    builtin: false,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

interface Entry {
  categorizer: Categorizer
  loadedAt: number
  /** The connection it was read through and that connection's data_version then. */
  seen: { sqlite: object; version: number }
  model: NaiveBayes | null
  trainedAt: number
}

/**
 * Per-tenant categorizers (rules + lessons + model), cached and rebuilt when a rule or an override
 * changes them.
 */
export function createTenantStates(ctx: ServiceContext) {
  const cache = new Map<string, Entry>()

  const train = (tenantId: string): NaiveBayes | null => {
    const db = ctx.registry.tenant('categorizer', tenantId)
    const rows = db.orm
      .select({
        description: categorized.description,
        counterparty: categorized.counterparty,
        direction: categorized.direction,
        category: categorized.category,
        source: categorized.source,
        confidence: categorized.confidence,
      })
      .from(categorized)
      .where(
        and(eq(categorized.tenantId, tenantId), inArray(categorized.source, ['override', 'rule'])),
      )
      .orderBy(desc(categorized.updatedAt))
      .limit(TRAINING_ROWS)
      .all()
    const model = new NaiveBayes()
    for (const r of rows) {
      if (!isCategory(r.category)) continue
      if (r.source === 'rule' && r.confidence < 0.85) continue
      model.add(
        {
          description: r.description,
          counterparty_name: r.counterparty,
          direction: r.direction as 'in' | 'out',
        },
        r.category,
        r.source === 'override' ? 3 : 1,
      )
    }
    return model.size > 0 ? model : null
  }

  const versionOf = (tenantId: string) => {
    const { sqlite } = ctx.registry.tenant('categorizer', tenantId)
    return {
      sqlite,
      version: sqlite.query<{ data_version: number }, []>(OTHERS_WROTE).get()!.data_version,
    }
  }

  const load = (tenantId: string, previous?: Entry, retrain = false): Entry => {
    const seen = versionOf(tenantId)
    const db = ctx.registry.tenant('categorizer', tenantId)
    const own = db.orm.select().from(rulesTable).where(eq(rulesTable.tenantId, tenantId)).all()
    const lessons: Learned = {
      byCounterparty: new Map(),
      byDescription: new Map(),
      byTransaction: new Map(),
    }
    for (const l of db.orm.select().from(learned).where(eq(learned.tenantId, tenantId)).all()) {
      if (!isCategory(l.category)) continue
      if (l.kind === 'counterparty') lessons.byCounterparty.set(l.key, l.category)
      else lessons.byDescription.set(l.key, l.category)
    }
    const overridden = db.orm
      .select({ id: categorized.id, category: categorized.category })
      .from(categorized)
      .where(and(eq(categorized.tenantId, tenantId), eq(categorized.source, 'override')))
      .all()
    for (const o of overridden)
      if (isCategory(o.category)) lessons.byTransaction.set(o.id, o.category)
    const now = Date.now()
    const stale = !previous || retrain || now - previous.trainedAt > RETRAIN_MS
    const model = stale ? train(tenantId) : previous.model
    return {
      categorizer: new Categorizer([...own.map(ruleOf), ...defaultRules], lessons, model),
      loadedAt: now,
      seen,
      model,
      trainedAt: stale ? now : previous!.trainedAt,
    }
  }

  return {
    /** The tenant's categorizer as of now. */
    get(tenantId: string): Categorizer {
      const hit = cache.get(tenantId)
      if (hit && Date.now() - hit.loadedAt < RELOAD_MS) {
        const now = versionOf(tenantId)
        if (now.sqlite === hit.seen.sqlite && now.version === hit.seen.version)
          return hit.categorizer
      }
      const entry = load(tenantId, hit)
      cache.set(tenantId, entry)
      return entry.categorizer
    },
    /** After a rule change (rules only) or an override (lessons and the model). */
    invalidate(tenantId: string, opts: { retrain?: boolean } = {}): void {
      const entry = load(tenantId, cache.get(tenantId), opts.retrain)
      cache.set(tenantId, entry)
    },
  }
}

export type TenantStates = ReturnType<typeof createTenantStates>
