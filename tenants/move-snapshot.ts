import { copyColumns } from './move-copy.ts'
import { runCopyJob } from './move-copy-worker.ts'
import { MoveError, q, type TenantTable } from './move-tables.ts'

const INBOX = 'consumer, event_id, handled_at'
const hasInboxIn = (schema: string) =>
  `(SELECT 1 FROM ${schema}.sqlite_master WHERE type = 'table' AND name = 'inbox')`

/**
 * Copies a tenant's rows (and recent inbox records) from a snapshot of the database at
 * `sourcePath` into a staging file (created with the target's schema and closed), on a thread of
 * its own (tenants/move-copy-worker.ts), and checks the copy against the snapshot's counts. The
 * staging file is synced when this resolves. Returns the rows copied per table. Used by the tier
 * move and by a move to another instance (tenants/handoff.ts).
 */
export async function copySnapshot(
  sourcePath: string,
  stagingPath: string,
  tables: readonly TenantTable[],
  opts: { tenantId: string; inboxSince: string; target: string },
): Promise<Record<string, number>> {
  const copied = await runCopyJob({
    sourcePath,
    stagingPath,
    tenantId: opts.tenantId,
    inboxSince: opts.inboxSince,
    tables: tables.map((t) => {
      const cols = copyColumns(t).map(q).join(', ')
      const count = (schema: string) =>
        `SELECT count(*) AS n FROM ${schema}.${q(t.name)} WHERE tenant_id = ?`
      return {
        name: t.name,
        copy: `INSERT INTO main.${q(t.name)} (${cols}) SELECT ${cols} FROM mmp_source.${q(t.name)} WHERE tenant_id = ?`,
        countSource: count('mmp_source'),
        countCopy: count('main'),
      }
    }),
    inbox: {
      check: `SELECT ${hasInboxIn('main')} AND ${hasInboxIn('mmp_source')} AS ok`,
      copy: `INSERT OR IGNORE INTO main.inbox (${INBOX}) SELECT ${INBOX} FROM mmp_source.inbox WHERE handled_at >= ?`,
    },
  })
  const counts: Record<string, number> = {}
  for (const t of copied) {
    if (t.landed !== t.expected || t.copied !== t.expected) {
      throw new MoveError(
        `${t.name}: ${t.expected} rows to move, ${t.copied} read, ${t.landed} in the copy for ${opts.target}`,
      )
    }
    counts[t.name] = t.copied
  }
  return counts
}
