import type { paymentIndex } from '../../schema/payment/tables.ts'
import type { PaymentDeps } from './deps.ts'
import type { Kind } from './rows.ts'
import type { Narrow, SqlRow } from './sql-row.ts'

export type IndexRow = Narrow<
  Pick<SqlRow<typeof paymentIndex>, 'ref' | 'kind' | 'tenant_id' | 'provider_id' | 'created_at'>,
  { kind: Kind }
>

/**
 * The platform index: which tenant a payment or disbursement belongs to, by our ref and by the
 * provider's id, and whether it is still open (what reconciliation scans).
 */
export function createProviderIndex(deps: PaymentDeps) {
  const run = (sql: string, ...args: (string | number)[]) => {
    const db = deps.platform()
    db.write(() => db.sqlite.query(sql).run(...args))
  }
  return {
    add(ref: string, kind: Kind, tid: string, at: string): void {
      run(
        'INSERT INTO payment_index (ref, kind, tenant_id, open, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)',
        ref,
        kind,
        tid,
        at,
        at,
      )
    },
    setProviderId(ref: string, providerId: string): void {
      run(
        'UPDATE payment_index SET provider_id = ?, updated_at = ? WHERE ref = ?',
        providerId,
        deps.nowIso(),
        ref,
      )
    },
    close(refs: string[]): void {
      if (refs.length === 0) return
      const db = deps.platform()
      const at = deps.nowIso()
      db.write(() => {
        const q = db.sqlite.query('UPDATE payment_index SET open = 0, updated_at = ? WHERE ref = ?')
        for (const ref of refs) q.run(at, ref)
      })
    },
    /** The tenant of a provider id or of our ref (the operator reads any tenant's payments). */
    tenantOf(idOrRef: string): string | null {
      return (
        deps
          .platform()
          .sqlite.query<{ tenant_id: string }, [string, string]>(
            'SELECT tenant_id FROM payment_index WHERE provider_id = ? OR ref = ? LIMIT 1',
          )
          .get(idOrRef, idOrRef)?.tenant_id ?? null
      )
    },
    /** Open rows the provider's id was never recorded for (their answer may have been lost). */
    unanswered(limit = 1000): IndexRow[] {
      return deps
        .platform()
        .sqlite.query<IndexRow, [number]>(
          'SELECT ref, kind, tenant_id, provider_id, created_at FROM payment_index WHERE open = 1 AND provider_id IS NULL ORDER BY created_at LIMIT ?',
        )
        .all(limit)
    },
    /** Open rows created at or before `cutoff`, oldest first. */
    open(cutoff: string, limit = 1000): IndexRow[] {
      return deps
        .platform()
        .sqlite.query<IndexRow, [string, number]>(
          'SELECT ref, kind, tenant_id, provider_id, created_at FROM payment_index WHERE open = 1 AND created_at <= ? ORDER BY created_at LIMIT ?',
        )
        .all(cutoff, limit)
    },
  }
}

export type ProviderIndex = ReturnType<typeof createProviderIndex>
