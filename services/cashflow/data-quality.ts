import { eq, sql } from 'drizzle-orm'
import { cashflowDataQuality } from '../../schema/cashflow/tables.ts'
import type { StatementProcessedEvent } from '../../schema/events.ts'
import { excluded } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'

/** Whether the latest imported statement adds up (DESIGN §16 "A statement proves itself"). */
export interface DataQuality {
  verdict: 'proven' | 'does_not_add_up' | 'unchecked'
  /** The owner's sentence where the statement does not add up, else null. */
  finding: Row['finding']
  import_id: Row['importId']
  file_name: Row['fileName']
  processed_at: Row['processedAt']
}

type Row = typeof cashflowDataQuality.$inferSelect

/**
 * Keeps the latest statement import's verdict per tenant. An event older than the one kept (a
 * redelivery, or one overtaken on the broker) changes nothing. Call inside the inbox transaction.
 */
export function recordStatementProof(
  db: Db,
  {
    tenantId,
    statement,
    processedAt,
    now,
  }: { tenantId: string; statement: StatementProcessedEvent; processedAt: string; now: Date },
): void {
  const t = cashflowDataQuality
  db.orm
    .insert(t)
    .values({
      tenantId,
      importId: statement.import_id,
      fileName: statement.file_name,
      verdict: statement.verdict ?? 'unchecked',
      finding: statement.verdict === 'does_not_add_up' ? (statement.finding ?? null) : null,
      processedAt,
      updatedAt: now.toISOString(),
    })
    .onConflictDoUpdate({
      target: t.tenantId,
      set: {
        importId: excluded(t.importId),
        fileName: excluded(t.fileName),
        verdict: excluded(t.verdict),
        finding: excluded(t.finding),
        processedAt: excluded(t.processedAt),
        updatedAt: excluded(t.updatedAt),
      },
      setWhere: sql`${excluded(t.processedAt)} >= ${t.processedAt}`,
    })
    .run()
}

export function readDataQuality(db: Db, tenantId: string): DataQuality | null {
  const t = cashflowDataQuality
  const row = db.orm
    .select({
      verdict: t.verdict,
      finding: t.finding,
      import_id: t.importId,
      file_name: t.fileName,
      processed_at: t.processedAt,
    })
    .from(t)
    .where(eq(t.tenantId, tenantId))
    .get()
  return row ? { ...row, verdict: row.verdict as DataQuality['verdict'] } : null
}
