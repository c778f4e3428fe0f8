import type { StatementProcessedEvent } from '../../schema/events.ts'
import type { Db } from '../kernel/db.ts'

/** Whether the latest imported statement adds up (DESIGN §16 "A statement proves itself"). */
export interface DataQuality {
  verdict: 'proven' | 'does_not_add_up' | 'unchecked'
  /** The owner's sentence where the statement does not add up, else null. */
  finding: string | null
  import_id: string
  file_name: string | null
  processed_at: string
}

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
  db.sqlite
    .query(
      `INSERT INTO cashflow_data_quality
         (tenant_id, import_id, file_name, verdict, finding, processed_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET import_id = excluded.import_id,
         file_name = excluded.file_name, verdict = excluded.verdict, finding = excluded.finding,
         processed_at = excluded.processed_at, updated_at = excluded.updated_at
       WHERE excluded.processed_at >= processed_at`,
    )
    .run(
      tenantId,
      statement.import_id,
      statement.file_name,
      statement.verdict ?? 'unchecked',
      statement.verdict === 'does_not_add_up' ? (statement.finding ?? null) : null,
      processedAt,
      now.toISOString(),
    )
}

export function readDataQuality(db: Db, tenantId: string): DataQuality | null {
  const row = db.sqlite
    .query<
      {
        verdict: DataQuality['verdict']
        finding: string | null
        import_id: string
        file_name: string | null
        processed_at: string
      },
      [string]
    >(
      `SELECT verdict, finding, import_id, file_name, processed_at FROM cashflow_data_quality
       WHERE tenant_id = ?`,
    )
    .get(tenantId)
  return row ?? null
}
