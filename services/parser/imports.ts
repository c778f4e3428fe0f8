import { and, desc, eq } from 'drizzle-orm'
import { imports } from '../../schema/parser/tables.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { StatementProofAnswer } from './proof-answer.ts'

/**
 * A tenant's statement imports, newest first, with what each read and whether it adds up: the
 * dashboard shows a statement that does not add up with its finding, never as healthy.
 */
export function listImports(ctx: ServiceContext, tenantId: string, limit: number) {
  const db = ctx.registry.tenant('parser', tenantId)
  const rows = db.orm
    .select()
    .from(imports)
    .where(and(eq(imports.tenantId, tenantId)))
    .orderBy(desc(imports.createdAt), desc(imports.id))
    .limit(limit)
    .all()
  return rows.map((r) => ({
    import_id: r.id,
    file_name: r.fileName,
    created_at: r.createdAt,
    read: r.read,
    accepted: r.accepted,
    duplicates: r.duplicates,
    rejected: r.rejected,
    skipped: r.skipped,
    layout: r.layout,
    proof: r.proof ? (JSON.parse(r.proof) as StatementProofAnswer) : null,
  }))
}
